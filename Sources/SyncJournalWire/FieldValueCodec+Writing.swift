import SyncJournalProtocol

/// Field values written straight to bytes: exactly what
/// ``FieldValueCodec/encode(_:)`` then ``JSONValue/encoded()`` give, without
/// a ``JSONValue`` per value in between (a reply echoing a large array would
/// otherwise hold a boxed JSON value per element while it is written).
extension FieldValueCodec {
    /// Appends the JSON of one value.
    static func write(_ value: FieldValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): JSONValue.writeInteger(number, to: &out)
        case .double(let number):
            if number.isFinite {
                JSONValue.writeNumber(number, to: &out)
            } else {
                out.append(contentsOf: #"{"double":"#.utf8)
                JSONValue.writeString(number.isNaN ? "nan" : (number > 0 ? "inf" : "-inf"), to: &out)
                out.append(UInt8(ascii: "}"))
            }
        case .string(let text): JSONValue.writeString(text, to: &out)
        case .bytes(let bytes):
            out.append(contentsOf: #"{"bytes":"#.utf8)
            JSONValue.writeString(Base64.encode(bytes), to: &out)
            out.append(UInt8(ascii: "}"))
        case .stringSet(let set):
            out.append(contentsOf: #"{"set":["#.utf8)
            for (index, element) in set.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(element, to: &out)
            }
            out.append(contentsOf: "]}".utf8)
        case .timestamp(let microseconds):
            out.append(contentsOf: #"{"timestamp":"#.utf8)
            JSONValue.writeInteger(microseconds, to: &out)
            out.append(UInt8(ascii: "}"))
        case .uuid(let value):
            out.append(contentsOf: #"{"uuid":"#.utf8)
            JSONValue.writeString(value.uuidString.lowercased(), to: &out)
            out.append(UInt8(ascii: "}"))
        case .array(let elements):
            out.append(contentsOf: #"{"array":["#.utf8)
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(element, to: &out)
            }
            out.append(contentsOf: "]}".utf8)
        case .object(let members):
            out.append(contentsOf: #"{"object":"#.utf8)
            write(fields: members, to: &out)
            out.append(UInt8(ascii: "}"))
        case .attachment(let attachment):
            // Members in byte order, as every object this writer makes.
            out.append(contentsOf: #"{"attachment":{"sha256":""#.utf8)
            out.append(contentsOf: attachment.content.hex.utf8)
            out.append(contentsOf: #"","size":"#.utf8)
            JSONValue.writeInteger(attachment.size, to: &out)
            out.append(contentsOf: #","type":"#.utf8)
            JSONValue.writeString(attachment.mediaType, to: &out)
            out.append(contentsOf: "}}".utf8)
        }
    }

    /// Appends the JSON object of a field list, names in UTF-8 byte order.
    static func write(fields: [String: FieldValue], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (index, field) in fields.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.writeString(field.key, to: &out)
            out.append(UInt8(ascii: ":"))
            write(field.value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}
