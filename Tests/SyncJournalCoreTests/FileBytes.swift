import Foundation
import SyncJournalCore

/// Reads, writes and patches whole files as byte arrays, bypassing the journal
/// code, so tests can damage journals exactly.
enum FileBytes {
    /// Every byte of the file at `path`.
    static func read(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Replaces the file at `path` with `bytes`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Adds `bytes` at the end of the file at `path`.
    static func append(_ bytes: [UInt8], to path: String) throws {
        try write(read(path) + bytes, to: path)
    }

    /// Whether something exists at `path`.
    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// The size of the file at `path`.
    static func size(_ path: String) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? -1
    }

    /// Makes the file at `path` exactly `length` bytes long (a hole of zeros
    /// when it grows), then writes `bytes` at that end: no large buffer.
    static func extend(_ path: String, to length: Int, thenAppend bytes: [UInt8] = []) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(length))
        if !bytes.isEmpty {
            try handle.seek(toOffset: UInt64(length))
            try handle.write(contentsOf: Data(bytes))
        }
    }

    /// Recomputes the header checksum of the format-2 record at `offset`,
    /// so that a patched field is the only thing wrong with it.
    static func resealRecordHeader(_ bytes: inout [UInt8], at offset: Int) {
        let crc = CRC32C.mask(CRC32C.checksum(bytes[(offset + 4)..<(offset + JournalFormat.recordHeaderLength)]))
        patchUInt32(&bytes, at: offset, crc)
    }

    /// Sets the little-endian `u32` at `offset` of `bytes`.
    static func patchUInt32(_ bytes: inout [UInt8], at offset: Int, _ value: UInt32) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> UInt32(8 * i)) }
    }

    /// Sets the little-endian `u16` at `offset` of `bytes`.
    static func patchUInt16(_ bytes: inout [UInt8], at offset: Int, _ value: UInt16) {
        for i in 0..<2 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> UInt16(8 * i)) }
    }
}
