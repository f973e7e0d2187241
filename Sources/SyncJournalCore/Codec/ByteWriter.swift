/// Appends the primitive encodings of the journal format to a byte array:
/// fixed-width little-endian integers, LEB128 varints, zigzag integers and
/// length-prefixed strings (see `journals/FORMAT.md`, section 4).
package struct ByteWriter: Sendable {
    /// The bytes written so far.
    package private(set) var bytes: [UInt8]

    /// Starts an empty buffer, reserving `capacity` bytes.
    package init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends one byte.
    package mutating func writeUInt8(_ value: UInt8) { bytes.append(value) }

    /// Appends a little-endian `u16`.
    package mutating func writeUInt16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    /// Appends a little-endian `u32`.
    package mutating func writeUInt32(_ value: UInt32) {
        // One append of the value's bytes, not one per byte.
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a little-endian `u64`.
    package mutating func writeUInt64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a little-endian two's complement `i64`.
    package mutating func writeInt64(_ value: Int64) { writeUInt64(UInt64(bitPattern: value)) }

    /// Appends an unsigned LEB128 varint.
    package mutating func writeVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Appends a signed integer as a zigzag varint.
    package mutating func writeZigzag(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Appends a varint length and the bytes.
    package mutating func writeBytes(_ value: some Collection<UInt8>) {
        writeVarint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Appends a varint length and the UTF-8 bytes of `value`.
    package mutating func writeString(_ value: String) {
        var copy = value
        copy.withUTF8 { writeBytes($0) }
    }

    /// Appends raw bytes with no length prefix.
    package mutating func writeRaw(_ value: some Sequence<UInt8>) { bytes.append(contentsOf: value) }
}
