import JournalDumpTool
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting

/// The journal-reader fuzz target: any bytes, read as a journal file, must
/// never crash, hang or allocate without bound; damage and decoding errors
/// are fine, but what is reported must be consistent.
///
/// Each input is run twice: as it is, and with its checksums recomputed
/// (``withChecksumsFixed(_:)``), because a mutated byte almost never keeps a
/// CRC-32C valid, and the decoders behind the checksums are what most needs
/// hostile input. Each run goes through the whole read side, on an
/// in-memory disk (``SimulatedDisk``):
///
/// 1. ``JournalReader``: `header()`, `scan`, `recordsAfterDamage()`;
/// 2. every record through ``JournalEntry/decode(_:)`` and
///    ``StoreEvent/decode(_:)``, each decoded event re-encoded and decoded
///    again (it must give back the same event);
/// 3. ``Replayer`` (the fold and `replay(path:system:)`);
/// 4. `journal-dump`'s text and JSON renderings of every record, the
///    summary and the rebuilt state;
/// 5. (``runStore(_:)``) ``LocalStore/open(path:options:)`` on the file,
///    which repairs a torn tail, then a checkpoint and a reopen.
///
/// ```swift
/// try FuzzJournalReader.run(bytes)               // the synchronous part
/// try await FuzzJournalReader.runStore(bytes)    // opening, checkpointing, reopening a store on it
/// ```
package enum FuzzJournalReader {
    /// The target's name, as the fuzz script and the regression directory name it.
    package static let name = "journal-reader"

    static let directory = "/fuzz"
    static let path = "/fuzz/input.journal"

    /// The synchronous checks on `bytes` and on their checksum-fixed variant.
    ///
    /// - Throws: ``FuzzFinding`` when an invariant does not hold.
    package static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        try check(bytes)
        let fixed = withChecksumsFixed(bytes)
        if fixed != bytes { try check(fixed) }
    }

    /// Everything: ``run(_:)``, then ``runStore(_:)`` on both variants.
    package static func runAll(_ bytes: [UInt8]) async throws(FuzzFinding) {
        try run(bytes)
        try await runStore(bytes)
        let fixed = withChecksumsFixed(bytes)
        if fixed != bytes { try await runStore(fixed) }
    }

    static func finding(_ invariant: String, _ detail: String) -> FuzzFinding {
        FuzzFinding(target: name, invariant: invariant, detail: detail)
    }

    /// `bytes` with the header checksum and every record checksum it frames
    /// recomputed, so the bytes behind them are what gets tested. Framing
    /// follows the header length and each record's length field; it stops at
    /// the first length that does not fit.
    package static func withChecksumsFixed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        guard bytes.count >= 16 else { return bytes }
        let headerLength = Int(readUInt32(bytes, at: 12))
        guard headerLength >= JournalFormat.headerLength, headerLength <= JournalFormat.maximumHeaderLength,
              bytes.count >= headerLength else { return bytes }
        writeUInt32(&bytes, at: headerLength - 4, CRC32C.mask(CRC32C.checksum(bytes[0..<(headerLength - 4)])))
        var offset = headerLength
        let major = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        let frame = JournalFormat.recordHeaderLength(major: major)
        while offset + frame <= bytes.count {
            if major == 1 {
                let length = Int(readUInt32(bytes, at: offset + 4))
                guard length <= JournalFormat.maximumPayloadLength, offset + frame + length <= bytes.count else { break }
                writeUInt32(&bytes, at: offset, CRC32C.mask(CRC32C.checksum(bytes[(offset + 4)..<(offset + frame + length)])))
                offset += frame + length
            } else {
                // Format 2: the payload's checksum, then the header's, which covers it.
                let length = Int(readUInt32(bytes, at: offset + 8))
                guard length <= JournalFormat.maximumPayloadLength, offset + frame + length <= bytes.count else { break }
                writeUInt32(&bytes, at: offset + 4, CRC32C.mask(CRC32C.checksum(bytes[(offset + frame)..<(offset + frame + length)])))
                writeUInt32(&bytes, at: offset, CRC32C.mask(CRC32C.checksum(bytes[(offset + 4)..<(offset + frame)])))
                offset += frame + length
            }
        }
        return bytes
    }

    private static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
    }

    private static func writeUInt32(_ bytes: inout [UInt8], at offset: Int, _ value: UInt32) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> UInt32(8 * i)) }
    }

    /// A fresh in-memory disk holding `bytes` as the journal.
    static func disk(holding bytes: [UInt8]) -> SimulatedDisk {
        let disk = SimulatedDisk()
        disk.createDirectory(directory)
        disk.setContents(of: path, to: bytes)
        return disk
    }

    /// The read side on one variant of the input.
    static func check(_ bytes: [UInt8]) throws(FuzzFinding) {
        let disk = disk(holding: bytes)
        let reader = JournalReader(path: path, system: disk)

        let header: JournalHeader?
        do { header = try reader.header() } catch {
            // Not a journal, or a version this reader does not know: scan must say the same.
            do {
                _ = try reader.scan()
                throw finding("header() and scan agree on what is a journal", "header() threw \(error), scan did not")
            } catch let error as FuzzFinding {
                throw error
            } catch {
                return
            }
        }

        var fold = Replayer.Fold()
        var foldFailure: Replayer.Failure?
        var visited: [JournalRecord] = []
        var problems: [FuzzFinding] = []
        var malformed = 0
        var unsupported = 0
        let report: JournalScanReport
        do {
            report = try reader.scan { record in
                visited.append(record)
                if foldFailure == nil {
                    do throws(Replayer.Failure) { try fold.fold(record) } catch { foldFailure = error }
                }
                do throws(FuzzFinding) { try checkRecord(record) } catch { problems.append(error) }
                do throws(JournalEntry.DecodeError) {
                    let (entry, event) = try JournalDumpCommand.decode(record)
                    _ = JournalDumpCommand.textLines(record, entry, event, nil)
                    _ = JournalDumpCommand.jsonLine(record, entry, event, nil).serialized
                } catch {
                    if case .unsupportedType = error { unsupported += 1 } else { malformed += 1 }
                    _ = JournalDumpCommand.textLines(record, nil, nil, error.description)
                    _ = JournalDumpCommand.jsonLine(record, nil, nil, error.description).serialized
                }
            }
        } catch {
            throw finding("scan reads what header() reads", "header() returned \(header.map { "\($0)" } ?? "nil"), scan threw \(error)")
        }
        if let problem = problems.first { throw problem }

        // The report agrees with itself, with the file and with header().
        if report.header != header {
            throw finding("scan and header() see the same header", "scan \(String(describing: report.header)), header() \(String(describing: header))")
        }
        if report.fileBytes != Int64(bytes.count) { throw finding("fileBytes is the file's size", "\(report.fileBytes) for \(bytes.count) bytes") }
        if report.validBytes > report.fileBytes { throw finding("validBytes within the file", "\(report.validBytes) > \(report.fileBytes)") }
        if report.recordCount != visited.count { throw finding("recordCount counts the records visited", "\(report.recordCount) vs \(visited.count)") }
        if report.recordsByType.values.reduce(0, +) != visited.count {
            throw finding("recordsByType adds up", "\(report.recordsByType) for \(visited.count) records")
        }
        switch report.status {
        case .clean:
            if report.validBytes + report.preallocatedBytes != report.fileBytes {
                throw finding("clean means every byte verified or preallocated", "valid \(report.validBytes), preallocated \(report.preallocatedBytes) of \(report.fileBytes)")
            }
            if bytes[Int(report.validBytes)...].contains(where: { $0 != 0 }) {
                throw finding("preallocated space is all zeros", "non-zero byte after offset \(report.validBytes)")
            }
        case .unsupported(let offset, _):
            if offset != report.validBytes && offset != 0 { throw finding("an unsupported record starts where the valid prefix ends", "at \(offset), valid \(report.validBytes)") }
            if report.preallocatedBytes != 0 { throw finding("only a clean journal has preallocated space", "\(report.preallocatedBytes) bytes") }
        case .tornTail(let offset, _), .corrupt(let offset, _):
            if offset != report.validBytes { throw finding("damage starts where the valid prefix ends", "damage at \(offset), valid \(report.validBytes)") }
            if report.preallocatedBytes != 0 { throw finding("only a clean journal has preallocated space", "\(report.preallocatedBytes) bytes") }
        }
        if let header {
            var expectedOffset = Int64(header.headerLength)
            var expectedSequence = header.firstSequence
            for record in visited {
                if record.offset != expectedOffset || record.sequence != expectedSequence {
                    throw finding("records are back to back in sequence",
                                  "record at \(record.offset) seq \(record.sequence), expected \(expectedOffset) seq \(expectedSequence)")
                }
                try checkHorizon(record, header: header)
                expectedOffset += Int64(record.length)
                expectedSequence &+= 1
            }
            if expectedOffset != report.validBytes { throw finding("validBytes ends the last record", "\(expectedOffset) vs \(report.validBytes)") }
            if report.lastSequence != visited.last?.sequence {
                throw finding("lastSequence is the last record's", "\(String(describing: report.lastSequence)) vs \(String(describing: visited.last?.sequence))")
            }
        } else if !visited.isEmpty || report.status.damageOffset != 0 {
            throw finding("a damaged header yields no records and damage at 0", "\(visited.count) records, \(report.status)")
        }

        // What a salvage would find after the damage.
        let after: [JournalRecord]
        do { after = try reader.recordsAfterDamage() } catch {
            throw finding("recordsAfterDamage reads what scan read", "threw \(error)")
        }
        switch report.status {
        case .clean, .unsupported:
            if !after.isEmpty { throw finding("nothing after the damage of a clean or intact journal", "\(after.count) records") }
        case .tornTail(let offset, let damage):
            // 1.x: damage is a torn tail only when no valid record follows it.
            // Format 2: records may follow, written in the same unsynced window
            // as the damaged one; none claims the damaged bytes were durable
            // (a horizon past the cut), and none lies beyond the in-flight limit.
            guard let header, header.hasSyncHorizons else {
                if !after.isEmpty { throw finding("a 1.x torn tail has no valid record after the cut", "\(after.count) records, first at \(after[0].offset)") }
                break
            }
            try checkRecordsAfterDamage(after, damageAt: offset, damage: damage, bytes: bytes, header: header)
            for record in after {
                if let horizon = record.syncHorizon, horizon > offset {
                    throw finding("no record after a torn tail claims the cut bytes were durable",
                                  "record at \(record.offset) has horizon \(horizon), cut at \(offset)")
                }
                if record.offset + Int64(record.length) > offset + Int64(header.inFlightLimit) {
                    throw finding("records after a torn tail lie within the in-flight limit",
                                  "record at \(record.offset) ends past \(offset) + \(header.inFlightLimit)")
                }
            }
        case .corrupt(let offset, let damage):
            if case .damageBeforeValidRecord(_, let validAt) = damage, after.first?.offset != validAt {
                throw finding("salvage starts at the valid record corruption names", "\(validAt) vs \(String(describing: after.first?.offset))")
            }
            if let header { try checkRecordsAfterDamage(after, damageAt: offset, damage: damage, bytes: bytes, header: header) }
        }

        // Replay, as the fold saw it and as Replayer.replay does it: no state
        // from a corrupt journal, nor one that skips a record not understood.
        if foldFailure == nil {
            do throws(Replayer.Failure) { try fold.finish(after: report) } catch { foldFailure = error }
        }
        let state: Result<StoreState, Replayer.Failure> = foldFailure.map { .failure($0) } ?? .success(fold.state)
        do {
            let replayed = try Replayer.replay(path: path, system: disk)
            guard case .success(let folded) = state, folded == replayed.state, replayed.records == fold.records else {
                let detail: String
                switch state {
                case .success(let folded): detail = "\(replayed.records) vs \(fold.records) records: " + replayed.state.difference(from: folded)
                case .failure(let failure): detail = "replay gave a state, the fold failed: \(failure)"
                }
                throw finding("Replayer.replay rebuilds what the fold rebuilds", detail)
            }
        } catch let error as FuzzFinding {
            throw error
        } catch {
            if case .success = state { throw finding("Replayer.replay rebuilds what the fold rebuilds", "replay threw \(error), the fold succeeded") }
        }

        // journal-dump's renderings of the whole file.
        if let header { _ = JournalDumpCommand.headerText(header) }
        _ = JournalDumpCommand.textSummary(report, malformed: malformed, unsupported: unsupported, recordsAfterDamage: after.count)
        _ = JournalDumpCommand.jsonSummary(report, malformed: malformed, unsupported: unsupported, recordsAfterDamage: after.count).serialized
        _ = JournalDumpCommand.textState(state, records: fold.records)
        _ = JournalDumpCommand.jsonState(state).serialized
    }

    /// A format-2 record carries a sync horizon no later than its own
    /// offset; a 1.x record carries none.
    static func checkHorizon(_ record: JournalRecord, header: JournalHeader) throws(FuzzFinding) {
        guard header.hasSyncHorizons else {
            if record.syncHorizon != nil { throw finding("a 1.x record has no sync horizon", "record at \(record.offset)") }
            return
        }
        guard let horizon = record.syncHorizon, horizon >= 0, horizon <= record.offset else {
            throw finding("a format-2 record's sync horizon lies within the file before it",
                          "record at \(record.offset), horizon \(String(describing: record.syncHorizon))")
        }
    }

    /// The records a salvage would keep after the damage at `offset`: each
    /// after it, in file order, none overlapping another, each well formed.
    /// In format 2 the damaged record is stepped over whole when its header
    /// verified (its extent is the writer's), so no frame inside its payload
    /// is ever taken for a record.
    static func checkRecordsAfterDamage(_ after: [JournalRecord], damageAt offset: Int64, damage: JournalDamage,
                                        bytes: [UInt8], header: JournalHeader) throws(FuzzFinding) {
        var previousEnd = offset + 1
        if header.hasSyncHorizons, Int(offset) + JournalFormat.recordHeaderLength <= bytes.count {
            switch innermost(damage) {
            case .checksumMismatch, .incompletePayload:
                let length = Int64(readUInt32(bytes, at: Int(offset) + 8))
                previousEnd = offset + Int64(JournalFormat.recordHeaderLength) + length
            default:
                break
            }
        }
        for record in after {
            if record.offset < previousEnd {
                throw finding("records after the damage are after it (and after a damaged record whose header verified) and do not overlap",
                              "record at \(record.offset), damage at \(offset) (\(damage)), previous end \(previousEnd)")
            }
            previousEnd = record.offset + Int64(record.length)
            try checkHorizon(record, header: header)
            try checkRecord(record)
        }
    }

    /// What is wrong with the damaged record itself, whatever the
    /// classification wrapped around it.
    static func innermost(_ damage: JournalDamage) -> JournalDamage {
        switch damage {
        case .damageBeforeValidRecord(let inner, _), .damageBehindHorizon(let inner, _, _), .damagedCompleteRecord(let inner),
             .flippedBit(let inner, _, _), .beyondInFlightLimit(let inner, _, _), .alteredHeaderField(let inner, _, _),
             .damageInClosedJournal(let inner, _):
            return innermost(inner)
        default:
            return damage
        }
    }

    /// Decodes one verified record both ways and checks that each decoded
    /// event survives encoding: decoding its encoding gives the same event.
    /// (Byte-for-byte equality is not required: a decoder may accept a
    /// redundant form, such as an outbox entry flagged "failure state follows"
    /// whose state is empty, that the encoder never writes.)
    static func checkRecord(_ record: JournalRecord) throws(FuzzFinding) {
        _ = try? JournalEntry.decode(record)
        let event: StoreEvent?
        do { event = try StoreEvent.decode(record) } catch { return }
        guard let event else { return }
        let encoded = event.encodedPayload()
        let again = JournalRecord(offset: record.offset, sequence: record.sequence, type: event.recordType, payload: encoded)
        let decoded: StoreEvent?
        do { decoded = try StoreEvent.decode(again) } catch {
            throw finding("a decoded event's encoding decodes", "record \(record.sequence) type \(record.type.name): \(error)")
        }
        if decoded != event {
            throw finding("a decoded event's encoding decodes to the same event", "record \(record.sequence) type \(record.type.name)")
        }
    }

    /// Opens a ``LocalStore`` on `bytes` (recovery cuts a torn tail), checks
    /// it holds what replay rebuilds, checkpoints it, and reopens it.
    ///
    /// - Throws: ``FuzzFinding`` when an invariant does not hold.
    package static func runStore(_ bytes: [UInt8]) async throws(FuzzFinding) {
        let disk = disk(holding: bytes)
        let report = try? JournalReader(path: path, system: disk).scan()
        let replayed = try? Replayer.replay(path: path, system: disk)
        let options = LocalStore.Options(system: disk, clock: ManualClock(), upkeep: .off, preallocationBytes: 4096)
        let store: LocalStore
        do { store = try await LocalStore.open(path: path, options: options) } catch {
            throw finding("a store opens on any file it can lock", "\(error)")
        }
        let status = await store.status
        guard case .ready = status else {
            if let replayed {
                throw finding("a journal that replays opens ready", "replay rebuilt \(replayed.records) records, the store is \(status)")
            }
            await closeQuietly(store)
            return
        }
        guard let replayed, let report else {
            throw finding("a store opens ready only on a journal that replays", "scan or replay failed, the store is ready")
        }
        let state: StoreState
        do { state = try await store.currentState() } catch { throw finding("a ready store has a state", "\(error)") }
        if state != replayed.state { throw finding("the store holds what replay rebuilds", state.difference(from: replayed.state)) }
        if store.recovery?.statusFound != report.status {
            throw finding("recovery finds what the reader finds", "\(String(describing: store.recovery?.statusFound)) vs \(report.status)")
        }
        if report.header?.majorVersion == 1 {
            // A ready store moves a 1.x journal to format 2: the same records,
            // cut at the valid prefix, then the closing sync-horizon record
            // every replacement file ends with (the next sequence number).
            var last: JournalRecord?
            let moved = try? JournalReader(path: path, system: disk).scan { last = $0 }
            if moved?.header?.majorVersion != 2 || moved?.status != .clean || moved?.recordCount != report.recordCount + 1
                || moved?.lastSequence != report.nextSequence || last?.type != .syncHorizon || last?.syncHorizon != last?.offset {
                throw finding("a ready store moves a 1.x journal to format 2 with the records of its valid prefix",
                              "\(String(describing: moved?.status)), \(moved?.recordCount ?? -1) of \(report.recordCount) records")
            }
        } else if Int64(disk.contents(of: path)?.count ?? -1) != report.validBytes + report.preallocatedBytes {
            throw finding("recovery cuts a torn tail at the valid prefix and keeps preallocated zeros",
                          "file of \(disk.contents(of: path)?.count ?? -1) bytes, valid \(report.validBytes), preallocated \(report.preallocatedBytes)")
        }
        do { try await store.checkpoint() } catch {
            throw finding("a ready store checkpoints", "\(error)")
        }
        let checkpointed: StoreState
        do { checkpointed = try await store.currentState() } catch { throw finding("a ready store has a state", "\(error)") }
        if checkpointed != state { throw finding("a checkpoint keeps the state", checkpointed.difference(from: state)) }
        do { try await store.close() } catch { throw finding("a store closes", "\(error)") }

        let reopened: LocalStore
        do { reopened = try await LocalStore.open(path: path, options: options) } catch { throw finding("a checkpointed store reopens", "\(error)") }
        let again: StoreState
        do { again = try await reopened.currentState() } catch { throw finding("a checkpointed store reopens ready", "\(error)") }
        await closeQuietly(reopened)
        if again != state { throw finding("replaying the checkpoint rebuilds the state", "reopened vs before: " + again.difference(from: state)) }
    }

    static func closeQuietly(_ store: LocalStore) async {
        try? await store.close()
    }
}
