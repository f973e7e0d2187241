import SyncJournalCore
import SyncJournalProtocol
import SyncJournalPlatform

/// A compacted edit that merged into an earlier queued operation and
/// removes itself in the same record (steps: replace the earlier operation,
/// then remove the edit), checked but not built.
///
/// Such edits are most of a long journal: a record edited again and again
/// while offline. Only the last replacement of each queued operation ever
/// reaches the state, so replay keeps the replacement's bytes and builds the
/// operation once, when something else reads the queue or replay ends.
/// The value is kept small: replay hands millions of them between threads.
package struct MergedEdit: Sendable {
    /// The record's payload, which holds the replacement.
    package let payload: [UInt8]
    /// The record's sequence number.
    package let sequence: UInt64
    /// The record's offset in the file.
    package let offset: Int64
    /// The edit's own id (the one the second step removes).
    package let editID: OperationID
    /// The queued operation the first step replaces.
    package let target: OperationID
    /// Where the replacement starts in the payload.
    private let replacementStart: Int

    /// The merged edit `record` holds, or `nil` when it is another event, or
    /// not plainly valid (then a full decode says precisely why). Whatever
    /// this accepts, ``StoreEvent/decode(_:forFold:)`` decodes, as the same edit.
    package static func recognise(_ record: JournalRecord) -> MergedEdit? {
        guard record.type == .compactedEdit else { return nil }
        let parts: (edit: OperationID, target: OperationID, start: Int)? = record.payload.withUnsafeBytes { payload in
            var cursor = PlainPayloadCursor(payload)
            guard let edit = cursor.plainOperation(), cursor.count(minimumItemSize: 17) == 2, cursor.byte() == 2,
                  let target = cursor.operationID(), target != edit.id else { return nil }
            let start = cursor.position
            guard let replacement = cursor.plainOperation(), replacement.id == target,
                  cursor.byte() == 1, cursor.operationID() == edit.id, cursor.isAtEnd else { return nil }
            return (edit.id, target, start)
        }
        guard let parts else { return nil }
        return MergedEdit(payload: record.payload, sequence: record.sequence, offset: record.offset,
                          editID: parts.edit, target: parts.target, replacementStart: parts.start)
    }

    /// The record, as the scan read it (but for its sync horizon, which decoding does not read).
    package var record: JournalRecord {
        JournalRecord(offset: offset, sequence: sequence, type: .compactedEdit, payload: payload)
    }

    /// Whether the replacement changes the record `key`.
    package func replaces(on key: RecordKey) -> Bool {
        var kind = key.kind, id = key.id
        return payload.withUnsafeBytes { payload in
            // Checked when recognised: the id, the kind byte, then two ASCII strings.
            var cursor = PlainPayloadCursor(payload, at: replacementStart + 17)
            guard let entity = cursor.asciiString(), let recordID = cursor.asciiString() else { return false }
            return kind.withUTF8 { RawMemory.equal(UnsafeRawBufferPointer($0), UnsafeRawBufferPointer(rebasing: payload[entity])) }
                && id.withUTF8 { RawMemory.equal(UnsafeRawBufferPointer($0), UnsafeRawBufferPointer(rebasing: payload[recordID])) }
        }
    }

    /// The replacement operation, built from its bytes.
    package func replacementOperation() throws(JournalEntry.DecodeError) -> JournalOperation {
        var reader = ByteReader(payload)
        do throws(ByteReader.Failure) {
            try reader.withRaw(replacementStart) { _ in }
            return try JournalOperation.decode(from: &reader)
        } catch {
            throw .malformed(sequence: sequence, offset: offset, type: .compactedEdit, error)
        }
    }
}
