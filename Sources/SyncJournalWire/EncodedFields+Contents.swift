import SyncJournalProtocol

extension EncodedFields {
    /// The contents the fields refer to (attachment values, tag 12 of
    /// journals/FORMAT.md section 4, at any depth), in the list's order:
    /// fields by name bytes, elements and members in theirs. The push rule
    /// for attachments and the server's references read them without
    /// building a value.
    ///
    /// ```swift
    /// let contents = EncodedFields.contents(inList: row.fields.bytes)
    /// ```
    package var contents: [ContentHash] { Self.contents(inList: bytes) }

    /// ``contents`` of a field list stored as `bytes`; a list that does not
    /// parse yields what was found before the damage (the storage checked
    /// the list when it was written, so that never happens in practice).
    package static func contents(inList bytes: [UInt8]) -> [ContentHash] {
        // Most rows hold no attachment: a list without the tag byte anywhere skips the walk.
        guard bytes.contains(12) else { return [] }
        var walk = ContentWalk(bytes: bytes)
        walk.fieldList()
        return walk.found
    }
}

/// A bounds-checked walk over field-codec bytes collecting attachment hashes.
private struct ContentWalk {
    let bytes: [UInt8]
    var position = 0
    var found: [ContentHash] = []
    /// Set when the bytes end early or hold an unknown tag: the walk stops.
    var broken = false

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func varint() -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count, shift < 64 {
            let next = bytes[position]
            position += 1
            value |= UInt64(next & 0x7F) << shift
            if next < 0x80 { return value }
            shift += 7
        }
        broken = true
        return 0
    }

    mutating func skip(_ count: UInt64) {
        guard count <= UInt64(bytes.count - position) else {
            broken = true
            return
        }
        position += Int(count)
    }

    mutating func fieldList() {
        let count = varint()
        var index: UInt64 = 0
        while index < count, !broken {
            skip(varint())
            value()
            index += 1
        }
    }

    mutating func value() {
        guard !broken, position < bytes.count else {
            broken = true
            return
        }
        let tag = bytes[position]
        position += 1
        switch tag {
        case 0, 1, 2: break
        case 3, 8: _ = varint()
        case 4: skip(8)
        case 5, 6: skip(varint())
        case 7:
            let count = varint()
            var index: UInt64 = 0
            while index < count, !broken {
                skip(varint())
                index += 1
            }
        case 9: skip(16)
        case 10:
            let count = varint()
            var index: UInt64 = 0
            while index < count, !broken {
                value()
                index += 1
            }
        case 11: fieldList()
        case 12:
            guard bytes.count - position >= 32 else {
                broken = true
                return
            }
            if let content = ContentHash(bytes: Array(bytes[position..<(position + 32)])) { found.append(content) }
            position += 32
            _ = varint()
            skip(varint())
        default:
            broken = true
        }
    }
}
