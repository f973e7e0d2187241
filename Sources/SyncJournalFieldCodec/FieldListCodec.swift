import SyncJournalCore
import SyncJournalProtocol

/// Encoding of a field list: a count, then name and value pairs in ascending
/// byte order of the names.
package enum FieldListCodec {
    /// Appends `fields` in canonical order.
    package static func encode(_ fields: [String: FieldValue], into writer: inout ByteWriter) {
        writer.writeVarint(UInt64(fields.count))
        // The pairs are sorted, comparing the names' bytes where they lie: no
        // array per comparison and no lookup per name (checkpoints encode
        // every live record's fields).
        for (name, value) in fields.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            writer.writeString(name)
            value.encode(into: &writer)
        }
    }

    /// Reads a field list, refusing empty, repeated or unordered names.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> [String: FieldValue] {
        let count = try reader.readCount(minimumItemSize: 2)
        // Replay decodes every record: one allocation for the table, and each
        // name made once, in place (its bytes are compared where they lie in
        // the payload).
        var fields = [String: FieldValue](minimumCapacity: count)
        var previous: Range<Int>?
        // Swift compares strings by canonical equivalence, so a name can
        // equal an earlier one whose bytes differ; but two ASCII strings are
        // equal only when their bytes are, and the order check already
        // refuses equal bytes. So while every name is ASCII the table need
        // not be searched before the insert.
        var allASCII = true
        for _ in 0..<count {
            let at = reader.position
            let name = try reader.readString()
            let bytes = (reader.position - name.utf8.count)..<reader.position
            if bytes.isEmpty { throw .invalid("empty field name", at: at) }
            let (ordered, ascii) = reader.bytes.withUnsafeBufferPointer { payload in
                let current = UnsafeBufferPointer(rebasing: payload[bytes])
                let ordered = previous.map { UnsafeBufferPointer(rebasing: payload[$0]).lexicographicallyPrecedes(current) } ?? true
                return (ordered, current.allSatisfy { $0 < 0x80 })
            }
            if !ordered { throw .invalid("field names out of order or repeated", at: at) }
            previous = bytes
            allASCII = allASCII && ascii
            if !allASCII && fields[name] != nil { throw .invalid("field names are canonically equivalent", at: at) }
            fields[name] = try FieldValue.decode(from: &reader)
        }
        return fields
    }
}
