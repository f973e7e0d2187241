/// One verified record read from a journal.
public struct JournalRecord: Sendable, Hashable {
    /// Offset of the record header in the file.
    public var offset: Int64
    /// The record's sequence number.
    public var sequence: UInt64
    /// The record's type.
    public var type: RecordType
    /// The payload bytes.
    public var payload: [UInt8]

    /// Creates a record value.
    public init(offset: Int64, sequence: UInt64, type: RecordType, payload: [UInt8]) {
        self.offset = offset
        self.sequence = sequence
        self.type = type
        self.payload = payload
    }

    /// Bytes the record takes in the file, header included.
    public var length: Int { JournalFormat.recordHeaderLength + payload.count }
}
