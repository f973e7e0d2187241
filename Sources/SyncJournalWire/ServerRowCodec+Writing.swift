import SyncJournalProtocol

/// Rows written straight to bytes: exactly what ``ServerRowCodec/encode(_:includingModelVersion:)``
/// then ``JSONValue/encoded()`` give (members in UTF-8 byte order), without the JSON tree.
extension ServerRowCodec {
    /// Appends the row's JSON, or `null`.
    static func write(_ row: ServerRow?, includingModelVersion: Bool, to out: inout [UInt8]) {
        guard let row else {
            out.append(contentsOf: "null".utf8)
            return
        }
        out.append(contentsOf: #"{"deletedAt":"#.utf8)
        if let deletedAt = row.deletedAt { JSONValue.writeInteger(deletedAt, to: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(contentsOf: #","fields":"#.utf8)
        FieldValueCodec.write(fields: row.fields, to: &out)
        out.append(contentsOf: #","id":"#.utf8)
        JSONValue.writeString(row.id, to: &out)
        out.append(contentsOf: #","kind":"#.utf8)
        JSONValue.writeString(row.kind, to: &out)
        if includingModelVersion, let version = row.modelVersion {
            out.append(contentsOf: #","modelVersion":"#.utf8)
            JSONValue.writeInteger(Int64(version), to: &out)
        }
        if let space = row.space.text {
            out.append(contentsOf: #","space":"#.utf8)
            JSONValue.writeString(space, to: &out)
        }
        out.append(contentsOf: #","updatedAt":"#.utf8)
        JSONValue.writeInteger(row.updatedAt, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}
