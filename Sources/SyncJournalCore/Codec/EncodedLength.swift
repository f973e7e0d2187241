/// The number of bytes ``ByteWriter`` would append for each primitive, worked
/// out without writing them: an edit's size is checked against the record
/// limit before it is encoded, and it is encoded only once, into its record.
package enum EncodedLength {
    /// The bytes of an unsigned LEB128 varint: one per started group of 7 bits.
    package static func varint(_ value: UInt64) -> Int {
        value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    /// The bytes of a zigzag varint.
    package static func zigzag(_ value: Int64) -> Int {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// The bytes of a length-prefixed byte string of `count` bytes.
    package static func bytes(count: Int) -> Int { varint(UInt64(count)) + count }

    /// The bytes of a length-prefixed UTF-8 string.
    package static func string(_ value: String) -> Int { bytes(count: value.utf8.count) }
}
