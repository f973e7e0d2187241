import SyncJournalCore
import SyncJournalFieldCodec
import SyncJournalProtocol

/// The journal's encoding of a server row (`journals/FORMAT.md`, "Server row").
extension ServerRow {
    /// Appends the row's encoding (`journals/FORMAT.md`, "Server row").
    package func encode(into writer: inout ByteWriter) {
        writer.writeString(kind)
        writer.writeString(id)
        writer.writeZigzag(updatedAt)
        // Bit 1 (format 2.3): a model version follows; a row without one is written as before 2.3.
        let version = modelVersion.flatMap { ProtocolLimits.isValidModelVersion($0) ? UInt64($0) : nil }
        // Bit 2 (format 2.5): the row's shared space follows; a personal row is written as before 2.5.
        writer.writeUInt8((deletedAt == nil ? 0 : 1) | (version == nil ? 0 : 2) | (space.isPersonal ? 0 : 4))
        if let deletedAt { writer.writeZigzag(deletedAt) }
        if let version { writer.writeVarint(version) }
        if !space.isPersonal { space.encodeShared(into: &writer) }
        FieldListCodec.encode(fields, into: &writer)
    }

    /// Reads one encoded row.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> ServerRow {
        let kindAt = reader.position
        let kind = try reader.readString()
        if kind.isEmpty { throw .invalid("empty kind", at: kindAt) }
        let idAt = reader.position
        let id = try reader.readString()
        if id.utf8.isEmpty || id.utf8.count > ProtocolLimits.maximumRecordIDBytes { throw .invalid("record id of \(id.utf8.count) bytes", at: idAt) }
        let updatedAt = try reader.readZigzag()
        let flagsAt = reader.position
        let flags = try reader.readUInt8()
        if flags & ~7 != 0 { throw .invalid("unknown row flags", at: flagsAt) }
        let deletedAt: Int64? = flags & 1 != 0 ? try reader.readZigzag() : nil
        var modelVersion: Int?
        if flags & 2 != 0 {
            let versionAt = reader.position
            let version = try reader.readVarint()
            guard version >= 1, version <= UInt64(ProtocolLimits.maximumModelVersion) else {
                throw .invalid("model version \(version), not 1 to \(ProtocolLimits.maximumModelVersion)", at: versionAt)
            }
            modelVersion = Int(version)
        }
        let space: SpaceID = flags & 4 != 0 ? try SpaceID.decodeShared(from: &reader) : .personal
        let fields = try FieldListCodec.decode(from: &reader)
        return ServerRow(kind: kind, id: id, fields: fields, updatedAt: updatedAt, deletedAt: deletedAt, modelVersion: modelVersion,
                         space: space)
    }
}
