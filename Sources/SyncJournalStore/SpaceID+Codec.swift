import SyncJournalCore
import SyncJournalProtocol

extension SpaceID {
    /// Reads a shared space's id, written as a `uuid` (16 bytes; any 16
    /// bytes name a space, as any name an operation).
    static func decodeShared(from reader: inout ByteReader) throws(ByteReader.Failure) -> SpaceID {
        let id = try OperationID.decode(from: &reader)
        // Sixteen bytes always spell a lowercase UUID.
        return SpaceID(id.description) ?? .personal
    }

    /// Writes a shared space's id as a `uuid` (16 bytes). Never called for
    /// the personal space, which is written as nothing.
    func encodeShared(into writer: inout ByteWriter) {
        guard let text, let id = OperationID(text) else { return }
        id.encode(into: &writer)
    }
}
