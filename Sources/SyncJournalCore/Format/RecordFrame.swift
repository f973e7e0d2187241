/// Encoding and verification of one record frame: the 28-byte record header
/// and its payload (`journals/FORMAT.md`, section 2).
public enum RecordFrame {
    /// Appends the frame of one record to `buffer`.
    public static func encode(type: RecordType, generation: UInt64, sequence: UInt64, payload: [UInt8], into buffer: inout [UInt8]) {
        let start = buffer.count
        buffer.append(contentsOf: [0, 0, 0, 0])  // checksum, filled in below
        appendLittleEndian(UInt32(payload.count), to: &buffer)
        appendLittleEndian(type.rawValue, to: &buffer)
        appendLittleEndian(UInt16(0), to: &buffer)
        appendLittleEndian(generation, to: &buffer)
        appendLittleEndian(sequence, to: &buffer)
        buffer.append(contentsOf: payload)
        let crc = buffer.withUnsafeBytes { raw in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(start + 4)...]))
        }
        let masked = CRC32C.mask(crc)
        for i in 0..<4 { buffer[start + i] = UInt8(truncatingIfNeeded: masked >> UInt32(8 * i)) }
    }

    /// The frame of one record.
    public static func encode(type: RecordType, generation: UInt64, sequence: UInt64, payload: [UInt8]) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(JournalFormat.recordHeaderLength + payload.count)
        encode(type: type, generation: generation, sequence: sequence, payload: payload, into: &buffer)
        return buffer
    }

    /// The fields of a record header, before the payload is checked.
    public struct Header: Sendable, Hashable {
        /// The stored, masked checksum.
        public var checksum: UInt32
        /// The declared payload length.
        public var length: UInt32
        /// The type number.
        public var type: RecordType
        /// The reserved field (0 when valid).
        public var reserved: UInt16
        /// The generation the record claims.
        public var generation: UInt64
        /// The sequence number the record claims.
        public var sequence: UInt64

        /// Parses the 28 bytes at `start` of `bytes`.
        public init(_ bytes: UnsafeRawBufferPointer, at start: Int) {
            func read<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
                var value: T = 0
                for i in 0..<MemoryLayout<T>.size { value |= T(bytes[start + offset + i]) << T(8 * i) }
                return value
            }
            checksum = read(0, UInt32.self)
            length = read(4, UInt32.self)
            type = RecordType(rawValue: read(8, UInt16.self))
            reserved = read(10, UInt16.self)
            generation = read(12, UInt64.self)
            sequence = read(20, UInt64.self)
        }
    }

    private static func appendLittleEndian<T: FixedWidthInteger>(_ value: T, to buffer: inout [UInt8]) {
        for i in 0..<MemoryLayout<T>.size { buffer.append(UInt8(truncatingIfNeeded: value >> T(8 * i))) }
    }
}
