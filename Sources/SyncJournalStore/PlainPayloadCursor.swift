import SyncJournalProtocol

/// Walks a record's payload in place to check that it is plainly valid,
/// without building anything: one pass over raw memory, for the records
/// replay meets by the million (``MergedEdit``).
///
/// Each step returns `nil` when the bytes are not what it expects, or are
/// valid in a way it does not bother with (a name or string that is not
/// ASCII, a set, an array, an object). It never accepts bytes that
/// ``SyncJournalCore/ByteReader`` and the field-list decoder would refuse:
/// varints follow the reader's rules (at most ten bytes, sixty-four bits,
/// minimal), counts its bound against the bytes left.
struct PlainPayloadCursor {
    /// The payload.
    let bytes: UnsafeRawBufferPointer
    /// The next byte to read.
    private(set) var position: Int

    /// A cursor at `position` in `bytes`.
    init(_ bytes: UnsafeRawBufferPointer, at position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { position == bytes.count }

    /// One byte.
    mutating func byte() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    /// Moves past `count` bytes; returns where they lie.
    mutating func skip(_ count: Int) -> Range<Int>? {
        guard count >= 0, bytes.count - position >= count else { return nil }
        defer { position += count }
        return position..<(position + count)
    }

    /// An unsigned LEB128 varint, refused as the reader refuses it.
    mutating func varint() -> UInt64? {
        guard position < bytes.count else { return nil }
        if bytes[position] < 0x80 {
            defer { position += 1 }
            return UInt64(bytes[position])
        }
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if shift == 63 && byte > 1 { return nil }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return byte == 0 && shift > 0 ? nil : result }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    /// A count or length no larger than the bytes left allow.
    mutating func count(minimumItemSize: Int = 1) -> Int? {
        guard let raw = varint(), raw <= UInt64((bytes.count - position) / max(minimumItemSize, 1)) else { return nil }
        return Int(raw)
    }

    /// An operation id's sixteen bytes.
    mutating func operationID() -> OperationID? {
        guard let range = skip(16) else { return nil }
        return OperationID(first: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: range.lowerBound, as: UInt64.self)),
                           second: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: range.lowerBound + 8, as: UInt64.self)))
    }

    /// A length-prefixed string whose bytes are all ASCII; returns where they lie.
    mutating func asciiString() -> Range<Int>? {
        guard let length = count(), let range = skip(length) else { return nil }
        // Eight bytes at a time: a byte is ASCII when its top bit is clear.
        var index = range.lowerBound
        var topBits: UInt64 = 0
        while range.upperBound - index >= 8 {
            topBits |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < range.upperBound {
            topBits |= UInt64(bytes[index])
            index += 1
        }
        return topBits & 0x8080_8080_8080_8080 == 0 ? range : nil
    }

    /// Whether the bytes at `first` sort strictly before those at `second`.
    private func precedes(_ first: Range<Int>, _ second: Range<Int>) -> Bool {
        for offset in 0..<min(first.count, second.count) {
            let a = bytes[first.lowerBound + offset], b = bytes[second.lowerBound + offset]
            if a != b { return a < b }
        }
        return first.count < second.count
    }

    /// A field list of ASCII names in strict order whose values are null,
    /// booleans, integers, doubles, ASCII strings or bytes.
    mutating func plainFieldList() -> Bool {
        guard let count = count(minimumItemSize: 2) else { return false }
        var previous: Range<Int>?
        for _ in 0..<count {
            guard let name = asciiString(), !name.isEmpty else { return false }
            if let previous, !precedes(previous, name) { return false }
            previous = name
            switch byte() {
            case 0, 1, 2: break
            case 3: guard varint() != nil else { return false }
            case 4: guard skip(8) != nil else { return false }
            case 5: guard asciiString() != nil else { return false }
            case 6: guard let length = self.count(), skip(length) != nil else { return false }
            default: return false
            }
        }
        return true
    }

    /// An operation whose entity kind and record id are ASCII and of
    /// allowed lengths and whose field list is plain.
    mutating func plainOperation() -> PlainOperationSpan? {
        let start = position
        guard let id = operationID(), let kind = byte(), OperationKind(code: kind) != nil,
              let entity = asciiString(), !entity.isEmpty,
              let recordID = asciiString(), !recordID.isEmpty, recordID.count <= JournalOperation.maximumRecordIDLength,
              let presence = byte(), presence & ~3 == 0 else { return nil }
        if presence & 1 != 0 { guard varint() != nil else { return nil } }
        guard varint() != nil else { return nil }
        // A model version (format 2.3) is plain when in range, as the full decode checks.
        if presence & 2 != 0 {
            guard let version = varint(), version >= 1, version <= UInt64(ProtocolLimits.maximumModelVersion) else { return nil }
        }
        guard plainFieldList() else { return nil }
        return PlainOperationSpan(id: id, bytes: start..<position, entity: entity, recordID: recordID)
    }
}
