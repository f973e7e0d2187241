/// Where JSON text and field encodings are written: an array of bytes, or
/// a ``ByteCounter`` that only adds up their length. A large value is
/// measured with the counter first, then written once into an array
/// reserved at its exact size, so it never passes through a doubling
/// array (which holds the old and the new storage while it grows).
protocol ByteSink {
    /// Appends one byte.
    mutating func append(_ byte: UInt8)
    /// Appends bytes.
    mutating func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8
    /// Whether this sink only counts: an object's members, which the
    /// encoding sorts by name, then need not be put in order to be measured.
    static var countsOnly: Bool { get }
}

extension Array: ByteSink where Element == UInt8 {
    static var countsOnly: Bool { false }
}

/// A sink that keeps only the number of bytes written to it.
struct ByteCounter: ByteSink {
    /// The bytes written so far.
    var count = 0

    mutating func append(_ byte: UInt8) { count += 1 }

    mutating func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        count += bytes.withContiguousStorageIfAvailable { $0.count } ?? bytes.reduce(0) { total, _ in total + 1 }
    }

    static var countsOnly: Bool { true }
}

/// The field codec's primitives (`journals/FORMAT.md`, section 4): LEB128
/// varints, zigzag integers, little-endian doubles and length-prefixed
/// bytes, as `ByteWriter` writes them for the storage.
extension ByteSink {
    mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        append(UInt8(rest))
    }

    mutating func appendZigzag(_ value: Int64) {
        appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func appendUInt64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// A varint length, then the bytes.
    mutating func appendLengthPrefixed(_ bytes: some Collection<UInt8>) {
        appendVarint(UInt64(bytes.count))
        append(contentsOf: bytes)
    }
}

/// How many bytes the field codec's varint of `value` takes.
func varintLength(_ value: UInt64) -> Int {
    var length = 1
    var rest = value >> 7
    while rest > 0 {
        length += 1
        rest >>= 7
    }
    return length
}
