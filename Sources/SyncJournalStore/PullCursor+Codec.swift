import SyncJournalCore
import SyncJournalProtocol

/// The journal's encoding of a pull cursor: the stamp (zigzag varint), then the id.
extension PullCursor {
    /// Appends the cursor's encoding.
    package func encode(into writer: inout ByteWriter) {
        writer.writeZigzag(updatedAt)
        writer.writeString(id)
    }

    /// Reads one cursor.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> PullCursor {
        PullCursor(updatedAt: try reader.readZigzag(), id: try reader.readString())
    }
}
