import SyncJournalCore
import SyncJournalTesting
import Testing

/// What the last record of a journal can prove. A record being written when
/// power failed may have any of its sectors still zero; anything else about
/// it (a byte that is neither the writer's nor zero, a closed journal's end)
/// is damage to bytes that were durable, and is reported, never cut.
@Suite("Exact recovery of the last record")
struct ExactRecoveryTests {
    static let sector = JournalFormat.sectorSize
    static let recordType = RecordType(rawValue: 1)

    /// Deterministic bytes, none of them zero, so a zero sector is always a
    /// lost one.
    static func payload(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 1...255, using: &generator) }
    }

    /// The bytes of a journal that crashed right after `durable` records were
    /// acknowledged and while `inFlight` was being appended: the file's size
    /// is the preallocation step past its records, as a crash leaves it.
    static func crashedJournal(durable: [[UInt8]], inFlight: [UInt8]?) -> (bytes: [UInt8], durableEnd: Int) {
        var bytes = SampleJournal.header(minorVersion: JournalFormat.minorVersion).encoded()
        var horizon = bytes.count
        for (index, payload) in durable.enumerated() {
            RecordFrame.encode(type: recordType, generation: SampleJournal.generation, sequence: UInt64(index + 1),
                               horizon: Int64(horizon), payload: payload, into: &bytes)
            horizon = bytes.count
        }
        let durableEnd = bytes.count
        if let inFlight {
            RecordFrame.encode(type: recordType, generation: SampleJournal.generation, sequence: UInt64(durable.count + 1),
                               horizon: Int64(durableEnd), payload: inFlight, into: &bytes)
        }
        let granule = 4096
        bytes += [UInt8](repeating: 0, count: (bytes.count / granule + 1) * granule - bytes.count)
        return (bytes, durableEnd)
    }

    /// Reads `bytes` as a journal file and returns the status's name.
    static func status(of bytes: [UInt8], in directory: TemporaryDirectory, name: String = "j.journal") throws -> JournalStatus {
        let path = directory.file(name)
        try FileBytes.write(bytes, to: path)
        return try JournalReader(path: path).readAll().report.status
    }

    /// Expects `bytes` to read corrupt at `offset`, and a writer to refuse the
    /// file without changing a byte of it.
    static func expectCorruptAndUntouched(_ bytes: [UInt8], at offset: Int, in directory: TemporaryDirectory,
                                          _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let path = directory.file("refused.journal")
        try FileBytes.write(bytes, to: path)
        let status = try JournalReader(path: path).readAll().report.status
        #expect(status.name == "corrupt", "\(comment): \(status)", sourceLocation: sourceLocation)
        #expect(status.damageOffset == Int64(offset), "\(comment): \(status)", sourceLocation: sourceLocation)
        await #expect(throws: JournalError.self, sourceLocation: sourceLocation) {
            _ = try await JournalWriter.open(path: path, options: SampleJournal.options(minorVersion: JournalFormat.minorVersion))
        }
        #expect(try FileBytes.read(path) == bytes, "\(comment): the file changed", sourceLocation: sourceLocation)
    }

    // MARK: - A torn record is never a flipped bit

    /// Every single-sector reversion of an in-flight record of `size` bytes
    /// reads torn, and the writer keeps the acknowledged records.
    static func everySectorReversionIsTorn(size: Int, stride: Int, in directory: TemporaryDirectory) throws {
        let durable = [Self.payload(100, seed: 1), Self.payload(700, seed: 2)]
        let (bytes, durableEnd) = crashedJournal(durable: durable, inFlight: payload(size, seed: UInt64(size)))
        let payloadStart = durableEnd + JournalFormat.recordHeaderLength
        let recordEnd = payloadStart + size
        var sector = payloadStart / Self.sector + 1
        var checked = 0
        while sector * Self.sector < recordEnd {
            var torn = bytes
            let start = sector * Self.sector
            for i in start..<min(recordEnd, start + Self.sector) { torn[i] = 0 }
            let status = try status(of: torn, in: directory)
            #expect(status.name == "torn-tail", "sector \(sector): \(status)")
            #expect(status.damageOffset == Int64(durableEnd), "sector \(sector): \(status)")
            checked += 1
            sector += stride
        }
        #expect(checked > 0)
    }

    @Test("Every single-sector reversion of a 64 KiB in-flight record reads as a torn tail")
    func everySectorOf64KiB() async throws {
        try await withTemporaryDirectory { try Self.everySectorReversionIsTorn(size: 64 << 10, stride: 1, in: $0) }
    }

    @Test("Every 16th sector reverted in a 1 MiB in-flight record reads as a torn tail")
    func sampledSectorsOf1MiB() async throws {
        try await withTemporaryDirectory { try Self.everySectorReversionIsTorn(size: 1 << 20, stride: 16, in: $0) }
    }

    @Test("Sampled sectors reverted in a 16 MiB in-flight record read as a torn tail")
    func sampledSectorsOf16MiB() async throws {
        try await withTemporaryDirectory { try Self.everySectorReversionIsTorn(size: 16 << 20, stride: 4099, in: $0) }
    }

    /// Solves for the subset of `vectors` whose exclusive or is `target`.
    static func solve(_ target: UInt32, _ vectors: [UInt32]) -> [Int]? {
        var rows: [(value: UInt32, used: Set<Int>)] = []
        for (index, vector) in vectors.enumerated() {
            var row = (value: vector, used: Set([index]))
            for existing in rows where row.value ^ existing.value < row.value {
                row.value ^= existing.value
                row.used.formSymmetricDifference(existing.used)
            }
            if row.value != 0 { rows.append(row); rows.sort { $0.value > $1.value } }
        }
        var x = (value: target, used: Set<Int>())
        for row in rows where x.value ^ row.value < x.value {
            x.value ^= row.value
            x.used.formSymmetricDifference(row.used)
        }
        return x.value == 0 ? x.used.sorted() : nil
    }

    @Test("A torn sector whose mismatch one flipped bit elsewhere would explain still reads as a torn tail")
    func checksumAliasBesideATornSectorIsTorn() async throws {
        try await withTemporaryDirectory { directory in
            let size = 64 << 10
            let durable = [Self.payload(300, seed: 5)]
            let durableEnd = Self.crashedJournal(durable: durable, inFlight: nil).durableEnd
            let payloadStart = durableEnd + JournalFormat.recordHeaderLength
            var content = Self.payload(size, seed: 77)
            // The file sector of the payload that never reached the disk, in payload coordinates.
            let lostSector = (payloadStart + 20_000) / Self.sector + 1
            let lostRange = (lostSector * Self.sector - payloadStart)..<((lostSector + 1) * Self.sector - payloadStart)
            let flip = (byte: 9000, bit: 3) // the bit whose flip would make the checksum match
            // Choose the lost sector's last four bytes so that, once the sector
            // reads as zeros, flipping `flip` makes the checksum match: the
            // alias the old rule took for rot.
            let free = Array((lostRange.upperBound - 4)..<lostRange.upperBound)
            var observed = content
            for i in lostRange { observed[i] = 0 }
            for i in free { content[i] = 0 }
            let perBit = CRC32C.bitSyndromes(length: size, positions: free + [flip.byte])
            let flipSyndrome = perBit.last![flip.bit]
            let vectors = perBit.dropLast().flatMap { $0 }
            // crc(observed ^ flip) == crc(content): the lost sector's content
            // must change the checksum by exactly the flip's change.
            let target = CRC32C.checksum(content) ^ CRC32C.checksum(observed) ^ flipSyndrome
            let bits = try #require(Self.solve(target, vectors))
            for bit in bits { content[free[bit / 8]] ^= 1 << UInt8(bit % 8) }
            var aliased = observed
            aliased[flip.byte] ^= 1 << UInt8(flip.bit)
            #expect(CRC32C.checksum(aliased) == CRC32C.checksum(content), "the alias is crafted")

            let (bytes, _) = Self.crashedJournal(durable: durable, inFlight: content)
            var torn = bytes
            for i in lostRange { torn[payloadStart + i] = 0 }
            let status = try Self.status(of: torn, in: directory)
            #expect(status.name == "torn-tail", "\(status)")

            let path = directory.file("alias.journal")
            try FileBytes.write(torn, to: path)
            let writer = try await JournalWriter.open(path: path, options: SampleJournal.options(minorVersion: JournalFormat.minorVersion))
            #expect(writer.recovery.bytesCut > 0)
            #expect(writer.nextSequence == 2)
            try await writer.close()
            let read = try JournalReader(path: path).readAll().records.filter { $0.type != .syncHorizon }
            #expect(read.map(\.payload) == durable)
        }
    }

    // MARK: - Damage to the last record is never cut

    enum LastRecordDamage: String, CaseIterable, CustomStringConvertible {
        case ffSector = "a sector of 0xFF"
        case twoHeaderBits = "two flipped header bits"
        case ffHeaderPart = "0xFF over part of the header"
        case emptyPayloadChecksum = "a wrong checksum of an empty payload"
        var description: String { rawValue }
    }

    /// A journal whose last data record is `lastPayload`, written by a
    /// writer in `mode`: closed cleanly, or (`crashed`) cut back to the state
    /// a crash after its acknowledgement leaves (no closing record, the
    /// preallocated zeros after it). Returns the bytes and the last record's
    /// offset.
    static func journal(closed: Bool, lastPayload: [UInt8], in directory: TemporaryDirectory) async throws -> (bytes: [UInt8], last: Int) {
        let path = directory.file("source-\(closed).journal")
        let records = try await SampleJournal.write([Self.payload(200, seed: 3), Self.payload(900, seed: 4), lastPayload],
                                                    to: path, mode: .durable, minorVersion: JournalFormat.minorVersion)
        var bytes = try FileBytes.read(path)
        let last = Int(records.last!.offset)
        if !closed {
            let end = last + records.last!.length
            bytes = Array(bytes[..<end]) + [UInt8](repeating: 0, count: (end / 4096 + 1) * 4096 - end)
        }
        return (bytes, last)
    }

    @Test("Damage to the last record of a closed and of a crashed journal reads corrupt and the file is left untouched",
          arguments: [false, true], LastRecordDamage.allCases)
    func lastRecordDamageIsCorrupt(closed: Bool, damage: LastRecordDamage) async throws {
        try await withTemporaryDirectory { directory in
            // The payload ends in zeros, as most record headers do: that no
            // longer makes the damage look like a write cut short.
            let lastPayload = damage == .emptyPayloadChecksum ? [] : Self.payload(1500, seed: 9) + [0, 0, 0, 0, 0, 0]
            var (bytes, last) = try await Self.journal(closed: closed, lastPayload: lastPayload, in: directory)
            switch damage {
            case .ffSector:
                let sector = (last + JournalFormat.recordHeaderLength) / Self.sector + 1
                for i in (sector * Self.sector)..<((sector + 1) * Self.sector) { bytes[i] = 0xFF }
            case .twoHeaderBits:
                bytes[last + 5] ^= 0x10
                bytes[last + 12] ^= 0x02
            case .ffHeaderPart:
                for i in (last + 30)..<(last + 40) { bytes[i] = 0xFF }
            case .emptyPayloadChecksum:
                FileBytes.patchUInt32(&bytes, at: last + 4, 0x1234_5678)
                FileBytes.resealRecordHeader(&bytes, at: last)
            }
            try await Self.expectCorruptAndUntouched(bytes, at: last, in: directory, "\(damage), closed \(closed)")
        }
    }

    @Test("Zeroing any tail of a closed journal reads corrupt, and the file is left untouched")
    func zeroedTailOfAClosedJournalIsCorrupt() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("closed.journal")
            let records = try await SampleJournal.write(SampleJournal.payloads(4), to: path, mode: .durable, minorVersion: JournalFormat.minorVersion)
            let bytes = try FileBytes.read(path)
            #expect(bytes.count % Self.sector != 0, "a closed journal never ends on a sector boundary")
            let lastStart = Int(records.last!.offset)
            // Bytes that are zero already (a horizon's high bytes) change nothing when zeroed.
            let lastNonZero = try #require(bytes.lastIndex { $0 != 0 })
            for cut in stride(from: lastNonZero, through: lastStart, by: -1) {
                var zeroed = bytes
                for i in cut..<bytes.count { zeroed[i] = 0 }
                let status = try Self.status(of: zeroed, in: directory)
                #expect(status.name == "corrupt", "zeros from \(cut): \(status)")
            }
            var zeroed = bytes
            for i in lastStart..<bytes.count { zeroed[i] = 0 }
            try await Self.expectCorruptAndUntouched(zeroed, at: lastStart, in: directory, "the last record and the closing record zeroed")
        }
    }

    @Test("A crashed journal whose unclaimed last record reads as zeros opens without it: the one loss no journal can detect")
    func zeroedLastRecordOfACrashedJournalReadsClean() async throws {
        try await withTemporaryDirectory { directory in
            var (bytes, last) = try await Self.journal(closed: false, lastPayload: Self.payload(100, seed: 8), in: directory)
            for i in last..<bytes.count { bytes[i] = 0 }
            let status = try Self.status(of: bytes, in: directory)
            #expect(status == .clean, "\(status)")
        }
    }

    // MARK: - Every writer closes with a horizon record

    @Test("Every writer mode closes with a sync horizon record and leaves an end no preallocation step can",
          arguments: [JournalWriter.Mode.durable, .groupCommit, .bulk])
    func everyModeClosesWithAHorizon(mode: JournalWriter.Mode) async throws {
        try await withTemporaryDirectory { directory in
            for count in 1...12 {
                let path = directory.file("closing-\(count).journal")
                let writer = try await JournalWriter.open(path: path, options: SampleJournal.options(mode: mode, minorVersion: JournalFormat.minorVersion))
                // Sizes that put the end of the closing record on a sector boundary occur among these.
                for index in 0..<count {
                    try await writer.append(type: Self.recordType, payload: Self.payload(100 + 37 * index + count, seed: UInt64(index)))
                }
                try await writer.close()
                let (report, records) = try JournalReader(path: path).readAll()
                #expect(report.status == .clean)
                #expect(records.last?.type == .syncHorizon)
                let lastData = try #require(records.last { $0.type != .syncHorizon })
                #expect((records.last?.syncHorizon ?? 0) >= lastData.offset + Int64(lastData.length), "it claims every record")
                #expect(try FileBytes.size(path) % Int64(Self.sector) != 0)
            }
        }
    }
}
