import SyncJournalPlatform

/// Reads the primitive encodings written by ``ByteWriter`` from a byte
/// buffer, throwing ``ByteReader/Failure`` instead of trapping on bad input.
package struct ByteReader: Sendable {
    /// Why a payload could not be decoded, with the position in the payload.
    package enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// The payload ended inside a value.
        case truncated(at: Int)
        /// A varint ran past 10 bytes or past 64 bits.
        case varintOverflow(at: Int)
        /// A string's bytes are not valid UTF-8.
        case invalidUTF8(at: Int)
        /// A value is outside what the format allows.
        case invalid(String, at: Int)
        /// Bytes were left over after the last value.
        case trailingBytes(count: Int, at: Int)

        /// A one-line explanation.
        package var description: String {
            switch self {
            case .truncated(let at): return "payload ends early at byte \(at)"
            case .varintOverflow(let at): return "varint too long at byte \(at)"
            case .invalidUTF8(let at): return "string at byte \(at) is not valid UTF-8"
            case .invalid(let what, let at): return "\(what) at byte \(at)"
            case .trailingBytes(let count, let at): return "\(count) unexpected trailing bytes at byte \(at)"
            }
        }
    }

    /// The bytes being read.
    package let bytes: [UInt8]
    /// The position of the next byte to read.
    package private(set) var position: Int

    /// Reads `bytes` from the start.
    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
        position = 0
    }

    /// Reads `bytes` from the start of a slice.
    package init(_ bytes: ArraySlice<UInt8>) { self.init(Array(bytes)) }

    /// Whether every byte has been read.
    package var isAtEnd: Bool { position == bytes.count }

    /// The number of bytes not yet read.
    package var remaining: Int { bytes.count - position }

    /// Throws unless every byte was read.
    package func expectEnd() throws(Failure) {
        if position != bytes.count { throw .trailingBytes(count: bytes.count - position, at: position) }
    }

    /// Reads one byte.
    package mutating func readUInt8() throws(Failure) -> UInt8 {
        guard position < bytes.count else { throw .truncated(at: position) }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func readFixed(_ width: Int) throws(Failure) -> UInt64 {
        guard bytes.count - position >= width else { throw .truncated(at: position) }
        var value: UInt64 = 0
        for i in 0..<width { value |= UInt64(bytes[position + i]) << UInt64(8 * i) }
        position += width
        return value
    }

    /// Reads a little-endian `u16`.
    package mutating func readUInt16() throws(Failure) -> UInt16 { UInt16(try readFixed(2)) }
    /// Reads a little-endian `u32`.
    package mutating func readUInt32() throws(Failure) -> UInt32 { UInt32(try readFixed(4)) }
    /// Reads a little-endian `u64`.
    package mutating func readUInt64() throws(Failure) -> UInt64 { try readFixed(8) }
    /// Reads a little-endian `i64`.
    package mutating func readInt64() throws(Failure) -> Int64 { Int64(bitPattern: try readFixed(8)) }

    /// Reads an unsigned LEB128 varint of at most 10 bytes.
    package mutating func readVarint() throws(Failure) -> UInt64 {
        // Most varints (counts, lengths, small numbers) are one byte.
        if position < bytes.count, bytes[position] < 0x80 {
            defer { position += 1 }
            return UInt64(bytes[position])
        }
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < bytes.count else { throw .truncated(at: position) }
            let byte = bytes[position]
            position += 1
            if shift == 63 && byte > 1 { throw .varintOverflow(at: start) }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                // A final zero group after the first byte is a redundant
                // (non-minimal) encoding: refused, so every value has one encoding.
                if byte == 0 && shift > 0 { throw .invalid("non-minimal varint", at: start) }
                return result
            }
            shift += 7
            if shift > 63 { throw .varintOverflow(at: start) }
        }
    }

    /// Reads a zigzag-encoded signed integer.
    package mutating func readZigzag() throws(Failure) -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// Reads a varint used as a count or length, refusing values larger than
    /// the bytes that remain (each counted item takes at least one byte), so a
    /// damaged count never becomes a huge allocation.
    package mutating func readCount(minimumItemSize: Int = 1) throws(Failure) -> Int {
        let start = position
        let raw = try readVarint()
        guard raw <= UInt64(remaining / max(minimumItemSize, 1)) else {
            throw .invalid("count \(raw) larger than the remaining payload", at: start)
        }
        return Int(raw)
    }

    /// Reads `count` raw bytes.
    package mutating func readRaw(_ count: Int) throws(Failure) -> [UInt8] {
        guard count >= 0, bytes.count - position >= count else { throw .truncated(at: position) }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// Reads a varint length and that many bytes.
    package mutating func readBytes() throws(Failure) -> [UInt8] {
        let count = try readCount()
        return try readRaw(count)
    }

    /// Runs `body` over the next `count` bytes, in place, and moves past them.
    package mutating func withRaw<Result>(_ count: Int, _ body: (UnsafeRawBufferPointer) -> Result) throws(Failure) -> Result {
        guard count >= 0, bytes.count - position >= count else { throw .truncated(at: position) }
        defer { position += count }
        let from = position
        return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[from..<from + count])) }
    }

    /// Reads a varint length and that many bytes of UTF-8.
    package mutating func readString() throws(Failure) -> String {
        let start = position
        let count = try readCount()
        // The string is made from the payload in place: no intermediate array.
        guard let string = try withRaw(count, { Self.validatedUTF8($0) }) else { throw .invalidUTF8(at: start) }
        return string
    }

    /// The string of `utf8`, or `nil` when the bytes are not valid UTF-8.
    ///
    /// `String(validating:as:)` is not specialised for UTF-8 and looks up
    /// generic type metadata on every call (a fifth of replay's time, measured
    /// with callgrind). Decoding with repair is specialised; valid UTF-8
    /// decodes to the very same bytes, and any repair changes them (a
    /// replacement character is inserted where the input was not valid), so
    /// comparing the bytes validates exactly as `String(validating:as:)` does.
    static func validatedUTF8(_ utf8: UnsafeRawBufferPointer) -> String? {
        // ASCII is valid UTF-8 and decodes unchanged: no comparison needed
        // (entity kinds, record ids and field names almost always are).
        if utf8.allSatisfy({ $0 < 0x80 }) { return String(decoding: utf8.assumingMemoryBound(to: UInt8.self), as: UTF8.self) }
        var string = String(decoding: utf8.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
        let unchanged = string.withUTF8 { decoded in
            RawMemory.equal(UnsafeRawBufferPointer(decoded), utf8)
        }
        return unchanged ? string : nil
    }
}
