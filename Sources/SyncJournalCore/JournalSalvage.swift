/// Explicit recovery of a damaged journal: copies what is valid into a new
/// journal and never touches the original.
///
/// ```swift
/// let result = try await JournalSalvage.salvage(from: "app.journal", to: "app.salvaged.journal",
///                                               includeRecordsAfterDamage: true)
/// print(result.prefixRecords, result.recordsAfterDamage)
/// ```
public enum JournalSalvage {
    /// What a salvage copied.
    public struct Result: Sendable, Hashable {
        /// How the source was found.
        public var sourceStatus: JournalStatus
        /// Records of the valid prefix copied as they were.
        public var prefixRecords: Int
        /// Valid records found after the damage and copied wrapped as ``RecordType/salvaged``.
        public var recordsAfterDamage: Int
        /// The new journal's header.
        public var header: JournalHeader
    }

    /// Copies the valid prefix of `source` into a new journal at `destination`
    /// (same journal id and sequence numbers, a new generation). With
    /// `includeRecordsAfterDamage`, every record of the source's generation
    /// that verifies after the damage is appended too, wrapped in a
    /// ``RecordType/salvaged`` record so that nothing replays it by accident.
    ///
    /// - Throws: ``JournalError/alreadyExists(path:)`` if `destination` exists;
    ///   ``JournalError/corrupt(path:offset:damage:)`` if the source header is
    ///   unreadable (there is no journal to continue); read and write errors.
    public static func salvage(from source: String, to destination: String, includeRecordsAfterDamage: Bool = false,
                               system: any SystemCalls = PosixSystemCalls()) async throws -> Result {
        try await BlockingIO.run { () throws -> Result in
            try salvageBlocking(from: source, to: destination, includeRecordsAfterDamage: includeRecordsAfterDamage, system: system)
        }
    }

    static func salvageBlocking(from source: String, to destination: String, includeRecordsAfterDamage: Bool,
                                system: any SystemCalls) throws -> Result {
        let io = FileIO(system)
        let reader = JournalReader(path: source, system: system)
        // Only the header is needed before copying; the copy itself is the one full scan.
        guard let sourceHeader = try reader.header() else {
            let damage = (try? reader.scan().status.damage) ?? nil
            throw JournalError.corrupt(path: source, offset: 0, damage: damage ?? .checksumMismatch)
        }
        if let existing = try? system.open(destination, .readOnly, 0) {
            try? system.close(existing)
            throw JournalError.alreadyExists(path: destination)
        }
        let header = JournalHeader(journalID: sourceHeader.journalID, generation: JournalHeader.randomGeneration(),
                                   continuesGeneration: sourceHeader.continuesGeneration,
                                   firstSequence: sourceHeader.firstSequence,
                                   createdAtMilliseconds: wallClockMilliseconds())
        // Written under a temporary name and renamed at the end, so a crash
        // never leaves a half-salvaged journal under the destination name.
        let temporary = destination + ".salvaging"
        let fd: FileDescriptor
        do { fd = try system.open(temporary, [.readWrite, .create, .truncate], 0o600) } catch { throw JournalError.io(error.at(temporary)) }
        defer { try? system.close(fd) }
        var offset: Int64 = 0
        var sequence = header.firstSequence
        func write(_ bytes: [UInt8]) throws {
            do { try io.writeAll(fd, bytes, at: offset, path: temporary) } catch { throw JournalError.io(error) }
            offset += Int64(bytes.count)
        }
        try write(header.encoded())
        var copied = 0
        let report = try reader.scan { record in
            try write(RecordFrame.encode(type: record.type, generation: header.generation, sequence: sequence, payload: record.payload))
            sequence += 1
            copied += 1
        }
        var after = 0
        if includeRecordsAfterDamage, report.status != .clean {
            for record in try reader.recordsAfterDamage() {
                var payload = ByteWriter(capacity: record.payload.count + 32)
                payload.writeUInt64(UInt64(record.offset))
                payload.writeUInt64(record.sequence)
                payload.writeUInt16(record.type.rawValue)
                payload.writeBytes(record.payload)
                try write(RecordFrame.encode(type: .salvaged, generation: header.generation, sequence: sequence, payload: payload.bytes))
                sequence += 1
                after += 1
            }
        }
        do {
            try system.fsync(fd)
            try system.rename(temporary, destination)
            try io.syncDirectory(FileIO.directory(of: destination))
        } catch {
            throw JournalError.io(error.at(temporary))
        }
        return Result(sourceStatus: report.status, prefixRecords: copied, recordsAfterDamage: after, header: header)
    }
}
