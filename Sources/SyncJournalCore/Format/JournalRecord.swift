/// One verified record read from a journal.
package struct JournalRecord: Sendable, Hashable {
    /// Offset of the record header in the file.
    package var offset: Int64
    /// The record's sequence number.
    package var sequence: UInt64
    /// The record's type.
    package var type: RecordType
    /// The payload bytes.
    package var payload: [UInt8]
    /// Format 2: how far the file was known to be durable when the record
    /// was written; `nil` for a format-1.x record, which carries none.
    package var syncHorizon: Int64?

    /// Creates a record value.
    package init(offset: Int64, sequence: UInt64, type: RecordType, payload: [UInt8], syncHorizon: Int64? = nil) {
        self.offset = offset
        self.sequence = sequence
        self.type = type
        self.payload = payload
        self.syncHorizon = syncHorizon
    }

    /// Bytes the record takes in the file, header included.
    package var length: Int {
        JournalFormat.recordHeaderLength(major: syncHorizon == nil ? 1 : 2) + payload.count
    }
}
