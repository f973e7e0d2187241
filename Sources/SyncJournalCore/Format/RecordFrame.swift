/// Encoding and verification of one record frame: the record header and its
/// payload (`journals/FORMAT.md`, section 2).
///
/// Format 2 (40-byte header):
///
/// | offset | field |
/// |---:|---|
/// | 0 | header checksum: masked CRC-32C of bytes 4 ..< 40 |
/// | 4 | payload checksum: masked CRC-32C of the payload |
/// | 8 | payload length |
/// | 12 | type |
/// | 14 | reserved (0) |
/// | 16 | generation |
/// | 24 | sequence |
/// | 32 | sync horizon |
///
/// The header has a checksum of its own so that a reader can trust a record's
/// length and horizon without its payload: the extent of a torn record is
/// known, and the search for records after damage costs a few bytes per
/// offset, never a payload's worth. Format 1.x frames (28 bytes, one
/// checksum over header and payload) are still read and, in a 1.x file,
/// still written.
package enum RecordFrame {
    /// Appends the format-2 frame of one record to `buffer`.
    ///
    /// `horizon` is the sync horizon: the file offset below which every byte
    /// was known to be durable when this record was written (at most the
    /// record's own offset).
    package static func encode(type: RecordType, generation: UInt64, sequence: UInt64, horizon: Int64,
                               payload: [UInt8], into buffer: inout [UInt8]) {
        let start = buffer.count
        let payloadChecksum = payload.withUnsafeBytes { CRC32C.mask(CRC32C.checksum($0)) }
        appendLittleEndian(UInt32(0), to: &buffer)  // header checksum, filled in below
        appendLittleEndian(payloadChecksum, to: &buffer)
        appendLittleEndian(UInt32(payload.count), to: &buffer)
        appendLittleEndian(type.rawValue, to: &buffer)
        appendLittleEndian(UInt16(0), to: &buffer)
        appendLittleEndian(generation, to: &buffer)
        appendLittleEndian(sequence, to: &buffer)
        appendLittleEndian(UInt64(bitPattern: horizon), to: &buffer)
        let crc = buffer.withUnsafeBytes { raw in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(start + 4)..<(start + JournalFormat.recordHeaderLength)]))
        }
        store(CRC32C.mask(crc), at: start, in: &buffer)
        buffer.append(contentsOf: payload)
    }

    /// Appends the format-1.x frame of one record to `buffer`.
    package static func encodeVersion1(type: RecordType, generation: UInt64, sequence: UInt64, payload: [UInt8],
                                       into buffer: inout [UInt8]) {
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
        store(CRC32C.mask(crc), at: start, in: &buffer)
    }

    /// Appends the frame of one record in the framing of `header`'s format.
    package static func encode(type: RecordType, header: JournalHeader, sequence: UInt64, horizon: Int64,
                               payload: [UInt8], into buffer: inout [UInt8]) {
        if header.hasSyncHorizons {
            encode(type: type, generation: header.generation, sequence: sequence, horizon: horizon, payload: payload, into: &buffer)
        } else {
            encodeVersion1(type: type, generation: header.generation, sequence: sequence, payload: payload, into: &buffer)
        }
    }

    /// The format-2 frame of one record.
    package static func encode(type: RecordType, generation: UInt64, sequence: UInt64, horizon: Int64,
                               payload: [UInt8]) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(JournalFormat.recordHeaderLength + payload.count)
        encode(type: type, generation: generation, sequence: sequence, horizon: horizon, payload: payload, into: &buffer)
        return buffer
    }

    /// The fields of a record header, before anything is checked.
    package struct Header: Sendable, Hashable {
        /// Format 2: the stored, masked checksum of the header; format 1.x:
        /// the stored, masked checksum of header and payload.
        package var checksum: UInt32
        /// Format 2: the stored, masked checksum of the payload (0 in 1.x).
        package var payloadChecksum: UInt32
        /// The declared payload length.
        package var length: UInt32
        /// The type number.
        package var type: RecordType
        /// The reserved field (0 when valid).
        package var reserved: UInt16
        /// The generation the record claims.
        package var generation: UInt64
        /// The sequence number the record claims.
        package var sequence: UInt64
        /// Format 2: the sync horizon the record claims (0 in 1.x).
        package var horizon: Int64

        /// Parses a format-2 record header from the 40 bytes at `start` of `bytes`.
        package init(_ bytes: UnsafeRawBufferPointer, at start: Int) {
            checksum = RecordFrame.load(bytes, start, UInt32.self)
            payloadChecksum = RecordFrame.load(bytes, start + 4, UInt32.self)
            length = RecordFrame.load(bytes, start + 8, UInt32.self)
            type = RecordType(rawValue: RecordFrame.load(bytes, start + 12, UInt16.self))
            reserved = RecordFrame.load(bytes, start + 14, UInt16.self)
            generation = RecordFrame.load(bytes, start + 16, UInt64.self)
            sequence = RecordFrame.load(bytes, start + 24, UInt64.self)
            horizon = Int64(bitPattern: RecordFrame.load(bytes, start + 32, UInt64.self))
        }

        /// Parses a format-1.x record header from the 28 bytes at `start` of `bytes`.
        package init(version1 bytes: UnsafeRawBufferPointer, at start: Int) {
            checksum = RecordFrame.load(bytes, start, UInt32.self)
            payloadChecksum = 0
            length = RecordFrame.load(bytes, start + 4, UInt32.self)
            type = RecordType(rawValue: RecordFrame.load(bytes, start + 8, UInt16.self))
            reserved = RecordFrame.load(bytes, start + 10, UInt16.self)
            generation = RecordFrame.load(bytes, start + 12, UInt64.self)
            sequence = RecordFrame.load(bytes, start + 20, UInt64.self)
            horizon = 0
        }
    }

    /// Whether the 40 bytes at `start` are a format-2 record header whose
    /// checksum verifies.
    package static func headerVerifies(_ bytes: UnsafeRawBufferPointer, at start: Int) -> Bool {
        let stored = load(bytes, start, UInt32.self)
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[(start + 4)..<(start + JournalFormat.recordHeaderLength)]))
        return CRC32C.mask(crc) == stored
    }

    static func load<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, _ offset: Int, _: T.Type) -> T {
        var value: T = 0
        for i in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + i]) << T(8 * i) }
        return value
    }

    private static func store(_ value: UInt32, at start: Int, in buffer: inout [UInt8]) {
        for i in 0..<4 { buffer[start + i] = UInt8(truncatingIfNeeded: value >> UInt32(8 * i)) }
    }

    private static func appendLittleEndian<T: FixedWidthInteger>(_ value: T, to buffer: inout [UInt8]) {
        for i in 0..<MemoryLayout<T>.size { buffer.append(UInt8(truncatingIfNeeded: value >> T(8 * i))) }
    }
}
