import SyncJournalCore
import SyncJournalProtocol

/// The journal's encoding of an operation id: its 16 raw bytes.
extension OperationID {
    /// Reads the 16 raw bytes of an id.
    static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> OperationID {
        try reader.withRaw(16) { raw in
            OperationID(first: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                        second: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }

    /// Appends the 16 raw bytes of the id.
    func encode(into writer: inout ByteWriter) {
        // `writeUInt64` writes little-endian: the byte-swapped word comes out in byte order.
        let (first, second) = words
        writer.writeUInt64(first.byteSwapped)
        writer.writeUInt64(second.byteSwapped)
    }
}
