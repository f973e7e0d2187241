/// The file header of a journal (`journals/FORMAT.md`, section 1).
package struct JournalHeader: Sendable, Hashable {
    /// Format major version; readers refuse ones they do not know.
    package var majorVersion: UInt16
    /// Format minor version.
    package var minorVersion: UInt16
    /// Bytes from the start of the file to the first record.
    package var headerLength: Int
    /// The journal's identity, kept across checkpoints.
    package var journalID: JournalID
    /// This file's random, non-zero generation; every record repeats it.
    package var generation: UInt64
    /// The generation this file replaces (0 when it is a new journal).
    package var continuesGeneration: UInt64
    /// Sequence number of the first record.
    package var firstSequence: UInt64
    /// Creation time, milliseconds since the Unix epoch (informational).
    package var createdAtMilliseconds: Int64
    /// Header flags (0 in every version so far; a format-2 reader that
    /// finds one set treats the journal as read-only).
    package var flags: UInt32
    /// Format 2: the most bytes the writer ever has written past the part of
    /// the file known to be durable. Recovery uses it to bound a torn tail:
    /// non-zero bytes farther than this past the damage cannot come from an
    /// interrupted append. 0 in a 1.x header, which has no such bound.
    package var inFlightLimit: UInt32
    /// Format 2: the reserved field at offset 72 (0 when valid).
    package var reserved: UInt32

    /// A format-2 header, or of `majorVersion` 1 for tools that write 1.x
    /// sample files. `minorVersion` is 0 unless given: the rules of 2.0 and
    /// 2.1, which crafted files and samples keep; a writer creating a
    /// journal passes ``JournalFormat/minorVersion``, whose closed-end rule
    /// its files keep.
    package init(
        journalID: JournalID,
        generation: UInt64,
        continuesGeneration: UInt64 = 0,
        firstSequence: UInt64 = 1,
        createdAtMilliseconds: Int64,
        flags: UInt32 = 0,
        inFlightLimit: UInt32 = JournalFormat.defaultInFlightLimit,
        majorVersion: UInt16 = JournalFormat.majorVersion,
        minorVersion: UInt16 = 0
    ) {
        self.majorVersion = majorVersion
        self.minorVersion = majorVersion == 1 ? 0 : minorVersion
        headerLength = JournalFormat.headerLength
        self.journalID = journalID
        self.generation = generation
        self.continuesGeneration = continuesGeneration
        self.firstSequence = firstSequence
        self.createdAtMilliseconds = createdAtMilliseconds
        self.flags = flags
        self.inFlightLimit = majorVersion == 1 ? 0 : inFlightLimit
        reserved = 0
    }

    /// The length of the header in front of each record of this file.
    package var recordHeaderLength: Int { JournalFormat.recordHeaderLength(major: majorVersion) }

    /// Whether this file's records carry a sync horizon (format 2 and later).
    package var hasSyncHorizons: Bool { majorVersion >= 2 }
    /// Whether the file's writers keep the closed-end rule (format 2.2 and
    /// later): a file size that is not a multiple of the sector size was
    /// left by a synced cut or a clean close, never by a power cut.
    package var keepsClosedEnd: Bool { majorVersion == 2 && minorVersion >= JournalFormat.closedEndMinorVersion }

    /// A random non-zero generation.
    package static func randomGeneration() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return UInt64.random(in: 1...UInt64.max, using: &generator)
    }

    /// The 80 bytes of the header, checksum included.
    package func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: JournalFormat.headerLength)
        writer.writeRaw(JournalFormat.magic)
        writer.writeUInt16(majorVersion)
        writer.writeUInt16(minorVersion)
        writer.writeUInt32(UInt32(JournalFormat.headerLength))
        writer.writeRaw(journalID.bytes)
        writer.writeUInt64(generation)
        writer.writeUInt64(continuesGeneration)
        writer.writeUInt64(firstSequence)
        writer.writeInt64(createdAtMilliseconds)
        writer.writeUInt32(flags)
        if majorVersion == 1 {
            writer.writeUInt64(0)
        } else {
            writer.writeUInt32(inFlightLimit)
            writer.writeUInt32(reserved)
        }
        writer.writeUInt32(CRC32C.mask(CRC32C.checksum(writer.bytes)))
        return writer.bytes
    }

    /// Why bytes are not a usable header.
    package typealias Problem = JournalHeaderProblem

    /// The header length a file declares, once its first 16 bytes are known,
    /// so a reader knows how many bytes to pass to ``decode(_:)``.
    ///
    /// Only the magic and the length are looked at: the version is trusted
    /// only once the checksum has verified, so a flipped version bit reads
    /// as damage, not as a future format. Every major version keeps the
    /// first 16 bytes and the checksum in the last 4 bytes of the header.
    package static func declaredLength(_ prefix: [UInt8]) throws(Problem) -> Int {
        guard prefix.count >= 16 else {
            if Array(prefix.prefix(JournalFormat.magic.count)) != Array(JournalFormat.magic.prefix(prefix.count)) { throw .badMagic }
            throw prefix.isEmpty ? .badMagic : .truncated(length: prefix.count)
        }
        var reader = ByteReader(Array(prefix.prefix(16)))
        guard (try? reader.readRaw(8)) == JournalFormat.magic else { throw .badMagic }
        _ = try? reader.readUInt32()
        let length = Int((try? reader.readUInt32()) ?? 0)
        guard length >= JournalFormat.headerLength, length <= JournalFormat.maximumHeaderLength else {
            throw .invalidField("header length \(length)")
        }
        return length
    }

    /// Decodes and verifies a header. `bytes` holds at least the declared header length.
    package static func decode(_ bytes: [UInt8]) throws(Problem) -> JournalHeader {
        let length = try declaredLength(bytes)
        guard bytes.count >= length else { throw .truncated(length: bytes.count) }
        var reader = ByteReader(Array(bytes.prefix(length)))
        do {
            _ = try reader.readRaw(8)
            let major = try reader.readUInt16()
            let minor = try reader.readUInt16()
            _ = try reader.readUInt32()
            let stored = UInt32(bytes[length - 4]) | UInt32(bytes[length - 3]) << 8 | UInt32(bytes[length - 2]) << 16 | UInt32(bytes[length - 1]) << 24
            guard CRC32C.mask(CRC32C.checksum(bytes[0..<(length - 4)])) == stored else { throw Problem.checksumMismatch }
            guard JournalFormat.readableMajorVersions.contains(major) else { throw Problem.unsupportedVersion(major: major, minor: minor) }
            let id = JournalID(bytes: try reader.readRaw(16))!
            let generation = try reader.readUInt64()
            let continues = try reader.readUInt64()
            let first = try reader.readUInt64()
            let created = try reader.readInt64()
            let flags = try reader.readUInt32()
            var inFlightLimit: UInt32 = 0
            var reserved: UInt32 = 0
            if major >= 2 {
                inFlightLimit = try reader.readUInt32()
                reserved = try reader.readUInt32()
                guard inFlightLimit >= JournalFormat.minimumInFlightLimit else { throw Problem.invalidField("in-flight limit \(inFlightLimit)") }
            }
            guard generation != 0 else { throw Problem.invalidField("generation 0") }
            guard first != 0 else { throw Problem.invalidField("first sequence 0") }
            guard first <= JournalFormat.maximumFirstSequence else { throw Problem.invalidField("first sequence \(first)") }
            var header = JournalHeader(journalID: id, generation: generation, continuesGeneration: continues,
                                       firstSequence: first, createdAtMilliseconds: created, flags: flags,
                                       inFlightLimit: inFlightLimit, majorVersion: major)
            header.minorVersion = minor
            header.headerLength = length
            header.reserved = reserved
            return header
        } catch let problem as Problem {
            throw problem
        } catch {
            throw .truncated(length: bytes.count)
        }
    }
}
