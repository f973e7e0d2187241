/// Explicit recovery of a damaged journal: copies what is valid into a new
/// journal and never touches the original. Apps reach it through
/// `LocalStore.salvage(path:to:includeRecordsAfterDamage:fileSystem:)`.
package enum JournalSalvage {
    /// What a salvage copied.
    package typealias Result = SalvageReport

    /// Copies the valid prefix of `source` into a new journal at `destination`
    /// (same journal id and sequence numbers, a new generation). With
    /// `includeRecordsAfterDamage`, every record of the source's generation
    /// that verifies after the damage is appended too, wrapped in a
    /// ``RecordType/salvaged`` record so that nothing replays it by accident.
    ///
    /// A source whose header is damaged is read under a header rebuilt from
    /// its records: the generation most of them agree on, and the first
    /// record's sequence number (see ``Result/headerRebuilt``).
    ///
    /// - Throws: ``JournalError/alreadyExists(path:)`` if `destination` exists;
    ///   ``JournalError/corrupt(path:offset:damage:)`` if the source header is
    ///   damaged and no record verifies to rebuild it from; read and write errors.
    package static func salvage(from source: String, to destination: String, includeRecordsAfterDamage: Bool = false,
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
        var rebuilt = false
        let sourceHeader: JournalHeader
        if let header = try reader.header() {
            sourceHeader = header
        } else if let header = try rebuildHeader(path: source, system: system) {
            sourceHeader = header
            rebuilt = true
        } else {
            let damage = (try? reader.scan().status.damage) ?? nil
            throw JournalError.corrupt(path: source, offset: 0, damage: damage ?? .checksumMismatch)
        }
        // An intact journal this version does not understand is not damaged:
        // copying its records up to the part it cannot read would drop the rest.
        if !rebuilt, case .unsupported(let offset, let reason) = try reader.scan().status {
            throw JournalError.unsupported(path: source, offset: offset, reason: reason)
        }
        if let existing = try? system.open(destination, .readOnly, 0) {
            try? system.close(existing)
            throw JournalError.alreadyExists(path: destination)
        }
        let header = JournalHeader(journalID: sourceHeader.journalID, generation: JournalHeader.randomGeneration(),
                                   continuesGeneration: sourceHeader.continuesGeneration,
                                   firstSequence: sourceHeader.firstSequence,
                                   createdAtMilliseconds: wallClockMilliseconds(), minorVersion: JournalFormat.minorVersion)
        // The new file appears under its name only once complete and synced:
        // its records claim nothing beyond the header.
        let horizon = Int64(header.headerLength)
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
        let report = try scan(source, system: system, assuming: rebuilt ? sourceHeader : nil) { record in
            try write(RecordFrame.encode(type: record.type, generation: header.generation, sequence: sequence, horizon: horizon,
                                         payload: record.payload))
            sequence += 1
            copied += 1
        }
        var after = 0
        if includeRecordsAfterDamage, let damageOffset = report.status.damageOffset {
            for record in try recordsAfter(damageOffset, in: source, system: system, header: sourceHeader,
                                            expectedSequence: report.nextSequence) {
                var payload = ByteWriter(capacity: record.payload.count + 32)
                payload.writeUInt64(UInt64(record.offset))
                payload.writeUInt64(record.sequence)
                payload.writeUInt16(record.type.rawValue)
                payload.writeBytes(record.payload)
                try write(RecordFrame.encode(type: .salvaged, generation: header.generation, sequence: sequence, horizon: horizon,
                                             payload: payload.bytes))
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
        return Result(sourceStatus: report.status, prefixRecords: copied, recordsAfterDamage: after, header: header,
                      headerRebuilt: rebuilt)
    }

    /// Scans `path`, under `header` instead of its own when one is given.
    private static func scan(_ path: String, system: any SystemCalls, assuming header: JournalHeader?,
                             _ visit: (JournalRecord) throws -> Void) throws -> JournalScanReport {
        try JournalReader(path: path, system: system).withScanner { scanner in try scanner.run(assuming: header, visit) }
    }

    private static func recordsAfter(_ offset: Int64, in path: String, system: any SystemCalls,
                                     header: JournalHeader, expectedSequence: UInt64) throws -> [JournalRecord] {
        try JournalReader(path: path, system: system).withScanner { scanner in
            try scanner.validRecords(after: offset, header: header, expectedSequence: expectedSequence)
        }
    }

    /// A header for a journal whose own header is damaged, rebuilt from its
    /// records, or `nil` when no record verifies.
    ///
    /// The generation is the one most format-2 record headers agree on (a
    /// record header verifies on its own, so every offset can be tried); a
    /// 1.x journal is recognised by its first record, right after the
    /// 80-byte header. The first sequence is that of the first record of
    /// the chosen generation. Fields no record repeats come from the damaged
    /// header as they are (journal id, continued generation, creation time):
    /// informational, and shown by the tools as rebuilt.
    package static func rebuildHeader(path: String, system: any SystemCalls = PosixSystemCalls()) throws -> JournalHeader? {
        let io = FileIO(system)
        let fd: FileDescriptor
        do { fd = try system.open(path, .readOnly, 0) } catch { throw JournalError.io(error.at(path)) }
        defer { try? system.close(fd) }
        let size: Int64
        do { size = try system.fileSize(fd) } catch { throw JournalError.io(error.at(path)) }
        let damaged: [UInt8]
        do { damaged = try io.read(fd, count: JournalFormat.headerLength, at: 0, path: path) } catch { throw JournalError.io(error) }
        guard damaged.count == JournalFormat.headerLength else { return nil }
        func field<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            damaged.withUnsafeBytes { RecordFrame.load($0, offset, T.self) }
        }
        let journalID = JournalID(bytes: Array(damaged[16..<32])) ?? .random()
        let continues = field(40, UInt64.self)
        let created = field(56, Int64.self)

        // Format 2: count verified record headers per generation, remembering
        // where each generation's first one is.
        var counts: [UInt64: (count: Int, first: Int64, sequence: UInt64)] = [:]
        var at = Int64(JournalFormat.headerLength)
        let headerLength = JournalFormat.recordHeaderLength
        while at + Int64(headerLength) <= size {
            let chunk: [UInt8]
            do { chunk = try io.read(fd, count: Int(min(Int64(FileWindow.chunk), size - at)), at: at, path: path) } catch { throw JournalError.io(error) }
            let lastStart = chunk.count - headerLength
            if lastStart < 0 { break }
            var index = 0
            var skipTo: Int64?
            chunk.withUnsafeBytes { raw in
                while index <= lastStart {
                    if RecordFrame.headerVerifies(raw, at: index) {
                        let frame = RecordFrame.Header(raw, at: index)
                        let offset = at + Int64(index)
                        if frame.generation != 0, frame.horizon <= offset {
                            var entry = counts[frame.generation] ?? (0, offset, frame.sequence)
                            entry.count += 1
                            counts[frame.generation] = entry
                            if Int(frame.length) <= JournalFormat.maximumPayloadLength {
                                let next = offset + Int64(headerLength) + Int64(frame.length)
                                if next > at + Int64(lastStart) { skipTo = next; return }
                                index += headerLength + Int(frame.length)
                                continue
                            }
                        }
                    }
                    index += 1
                }
            }
            at = skipTo ?? (at + Int64(lastStart + 1))
        }
        if let best = counts.max(by: { $0.value.count < $1.value.count || ($0.value.count == $1.value.count && $0.value.first > $1.value.first) }) {
            return JournalHeader(journalID: journalID, generation: best.key,
                                 continuesGeneration: best.value.sequence > 1 ? continues : 0,
                                 firstSequence: best.value.sequence, createdAtMilliseconds: created)
        }
        // Format 1.x: the first record right after the header.
        let v1Length = JournalFormat.version1RecordHeaderLength
        let first: [UInt8]
        do { first = try io.read(fd, count: v1Length, at: Int64(JournalFormat.headerLength), path: path) } catch { throw JournalError.io(error) }
        guard first.count == v1Length else { return nil }
        let frame = first.withUnsafeBytes { RecordFrame.Header(version1: $0, at: 0) }
        guard Int(frame.length) <= JournalFormat.maximumPayloadLength,
              Int64(JournalFormat.headerLength + v1Length) + Int64(frame.length) <= size else { return nil }
        let whole: [UInt8]
        do { whole = try io.read(fd, count: v1Length + Int(frame.length), at: Int64(JournalFormat.headerLength), path: path) } catch { throw JournalError.io(error) }
        guard CRC32C.mask(CRC32C.checksum(whole[4...])) == frame.checksum, frame.generation != 0, frame.sequence != 0 else { return nil }
        return JournalHeader(journalID: journalID, generation: frame.generation,
                             continuesGeneration: frame.sequence > 1 ? continues : 0,
                             firstSequence: frame.sequence, createdAtMilliseconds: created, majorVersion: 1)
    }
}
