import SyncJournalCore
import SyncJournalProtocol

/// Encoding of a field list: a count, then name and value pairs in ascending
/// byte order of the names.
package enum FieldListCodec {
    /// Appends `fields` in canonical order.
    package static func encode(_ fields: [String: FieldValue], into writer: inout ByteWriter) {
        writer.writeVarint(UInt64(fields.count))
        // Most operations change one or two fields: those are put in order
        // without making a sorted array (a checkpoint encodes every live record).
        if fields.count <= 2 {
            var pairs = fields.makeIterator()
            guard let first = pairs.next() else { return }
            guard let second = pairs.next() else {
                writer.writeString(first.key)
                first.value.encode(into: &writer)
                return
            }
            let (low, high) = first.key.utf8.lexicographicallyPrecedes(second.key.utf8) ? (first, second) : (second, first)
            writer.writeString(low.key)
            low.value.encode(into: &writer)
            writer.writeString(high.key)
            high.value.encode(into: &writer)
            return
        }
        // The pairs are sorted, comparing the names' bytes where they lie: no
        // array per comparison and no lookup per name (checkpoints encode
        // every live record's fields).
        for (name, value) in fields.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            writer.writeString(name)
            value.encode(into: &writer)
        }
    }

    /// The bytes ``encode(_:into:)`` appends for `fields`, counted without
    /// writing or sorting them.
    package static func encodedLength(_ fields: [String: FieldValue]) -> Int {
        fields.reduce(EncodedLength.varint(UInt64(fields.count))) { $0 + EncodedLength.string($1.key) + $1.value.encodedLength }
    }

    /// Reads a field list, refusing empty, repeated or unordered names; its values'
    /// arrays and objects may nest `depth` deep (the members of an object are a
    /// field list one level down).
    package static func decode(from reader: inout ByteReader,
                               depth: Int = FieldValue.maximumNestingDepth) throws(ByteReader.Failure) -> [String: FieldValue] {
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
            fields[name] = try FieldValue.decode(from: &reader, depth: depth)
        }
        return fields
    }

    /// Moves past a field list without building it, when it is plainly valid:
    /// every name and string value ASCII, no set among the values, the names
    /// in order. Returns false otherwise (the reader is then anywhere): the
    /// caller decodes the list with ``decode(from:)``, which validates it
    /// fully and throws the precise failure. Replay skips the fields of an
    /// edit that its own compaction removes, which no state ever holds.
    package static func skipIfPlain(_ reader: inout ByteReader) -> Bool {
        do throws(ByteReader.Failure) {
            let count = try reader.readCount(minimumItemSize: 2)
            var previous = 0..<0
            for index in 0..<count {
                let length = try reader.readCount()
                let start = reader.position
                try reader.withRaw(length) { _ in }
                let name = start..<reader.position
                if name.isEmpty { return false }
                let plain = reader.bytes.withUnsafeBufferPointer { payload in
                    let current = UnsafeBufferPointer(rebasing: payload[name])
                    guard current.allSatisfy({ $0 < 0x80 }) else { return false }
                    return index == 0 || UnsafeBufferPointer(rebasing: payload[previous]).lexicographicallyPrecedes(current)
                }
                if !plain { return false }
                previous = name
                switch try reader.readUInt8() {
                case 0, 1, 2: break
                case 3: _ = try reader.readVarint()
                case 4: _ = try reader.readUInt64()
                case 5:
                    let stringLength = try reader.readCount()
                    let ascii = try reader.withRaw(stringLength) { $0.allSatisfy { $0 < 0x80 } }
                    if !ascii { return false }
                case 6:
                    let byteCount = try reader.readCount()
                    try reader.withRaw(byteCount) { _ in }
                default:
                    return false
                }
            }
            return true
        } catch {
            return false
        }
    }
}
