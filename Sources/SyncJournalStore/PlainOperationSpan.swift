import SyncJournalProtocol

/// Where an operation lies in a record's payload, found by
/// `PlainPayloadCursor.plainOperation()` without building it: its id, its
/// bytes, and the bytes of its entity kind and record id (all ASCII).
package struct PlainOperationSpan: Sendable, Hashable {
    /// The operation's id.
    package var id: OperationID
    /// The whole operation's bytes in the payload.
    package var bytes: Range<Int>
    /// The entity kind's bytes.
    package var entity: Range<Int>
    /// The record id's bytes.
    package var recordID: Range<Int>

    /// A span of an operation.
    package init(id: OperationID, bytes: Range<Int>, entity: Range<Int>, recordID: Range<Int>) {
        self.id = id
        self.bytes = bytes
        self.entity = entity
        self.recordID = recordID
    }
}
