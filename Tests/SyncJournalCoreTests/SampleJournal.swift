import SyncJournalCore

/// Builds the journals the tests start from: with fixed ids and a fixed
/// generation so crafted bytes are predictable.
enum SampleJournal {
    /// The generation of every sample journal.
    static let generation: UInt64 = 0x5EED_0000_0000_0001
    /// Another file's generation, for stale bytes.
    static let otherGeneration: UInt64 = 0x0DD0_0000_0000_0002

    /// The header sample journals are created with. Minor version 0 by
    /// default: most tests here craft crash states by cutting a file at any
    /// byte, which only files of 2.0 and 2.1 writers can be left in, and
    /// check the rules every format-2 file is read by. Minor version 2 (the
    /// current one) adds the closed-end rule, covered by its own tests.
    static func header(firstSequence: UInt64 = 1, minorVersion: UInt16 = 0) -> JournalHeader {
        JournalHeader(journalID: JournalID(bytes: Array(1...16))!, generation: generation,
                      firstSequence: firstSequence, createdAtMilliseconds: 1_700_000_000_000, minorVersion: minorVersion)
    }

    /// Writer options that create journals with ``header(firstSequence:minorVersion:)``.
    static func options(mode: JournalWriter.Mode = .durable, system: any SystemCalls = PosixSystemCalls(),
                        minorVersion: UInt16 = 0) -> JournalWriter.Options {
        JournalWriter.Options(mode: mode, system: system, headerForNewJournal: { header(minorVersion: minorVersion) })
    }

    /// A few small payloads of the operation type.
    static func payloads(_ count: Int, prefix: String = "record") -> [[UInt8]] {
        (1...count).map { Array("\(prefix)-\($0)".utf8) }
    }

    /// Creates a journal at `path` through ``JournalWriter`` holding `payloads`
    /// (of type `0x0001`), closes it, and returns the records as read back.
    @discardableResult
    static func write(_ payloads: [[UInt8]], to path: String, type: RecordType = RecordType(rawValue: 1),
                      mode: JournalWriter.Mode = .bulk, minorVersion: UInt16 = 0) async throws -> [JournalRecord] {
        let writer = try await JournalWriter.open(path: path, options: options(mode: mode, minorVersion: minorVersion))
        for payload in payloads { try await writer.append(type: type, payload: payload) }
        try await writer.close()
        let (report, read) = try JournalReader(path: path).readAll()
        // The writer's closing record (its horizon covers the rest) is not one of the payloads.
        let records = read.filter { $0.type != .syncHorizon }
        guard report.status == .clean, records.count == payloads.count else {
            throw JournalError.corrupt(path: path, offset: report.status.damageOffset ?? -1, damage: report.status.damage ?? .checksumMismatch)
        }
        return records
    }

    /// The bytes of a journal crafted frame by frame, for files the writer
    /// would never produce: each frame is (sequence, generation, payload).
    static func crafted(header: JournalHeader = header(), frames: [(sequence: UInt64, generation: UInt64, payload: [UInt8])]) -> [UInt8] {
        var bytes = header.encoded()
        for frame in frames {
            // Horizon: the header only, which every format-2 record may claim.
            RecordFrame.encode(type: RecordType(rawValue: 1), generation: frame.generation, sequence: frame.sequence,
                               horizon: Int64(header.headerLength), payload: frame.payload, into: &bytes)
        }
        return bytes
    }
}
