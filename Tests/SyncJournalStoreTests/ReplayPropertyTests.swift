import Foundation
import SyncJournalPlatform
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import SyncJournalTestSupport
import Testing

// Replay: for random histories of edits and sync outcomes,
// the state rebuilt from every prefix of the journal equals the live state at
// that point.
//
// Each history drives a real `LocalStore` through its app- and engine-facing
// API. After every call it records the journal file's bytes and the live
// `currentState()`. A checkpoint replaces the file (a new generation); the
// system-call layer below the store keeps a copy of each file just before it
// is renamed over, so the prefixes of every generation can be replayed. Then
// every prefix of every generation is replayed with `Replayer.replay(path:)`
// from a truncated copy: at each record boundary it must give the live state
// recorded there; cut inside a record it must give the state at the boundary
// before (a torn tail). Inside a checkpoint (before its end part) replay must
// refuse rather than return a smaller state. And each call's write, with the
// file synced before it, is crashed on a simulated disk: any subset of its
// sectors kept, either length; replay must give the live state at a record
// boundary the write reached (one random state per write, or every state).


/// Reopens a store after `close()`.
fileprivate func reopenForReplay(path: String, options: LocalStore.Options) async throws -> LocalStore {
    try await LocalStore.open(path: path, options: options)
}

/// Passes calls to the real system calls and keeps a copy of the file a
/// `rename` is about to replace, so a test can read an old generation after a
/// checkpoint renamed the new one over it.
private final class ReplacedFileArchive: SystemCalls, Sendable {
    private let base = PosixSystemCalls()
    private let replaced = Mutex<[[UInt8]]>([])

    /// The copies kept since the last call, oldest first.
    func takeReplaced() -> [[UInt8]] {
        replaced.withLock { list in
            defer { list = [] }
            return list
        }
    }

    func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        try base.open(path, options, mode)
    }
    func close(_ fd: FileDescriptor) throws(SystemError) { try base.close(fd) }
    func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        try base.pread(fd, into: buffer, at: offset)
    }
    func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        try base.pwrite(fd, from: buffer, at: offset)
    }
    func fdatasync(_ fd: FileDescriptor) throws(SystemError) { try base.fdatasync(fd) }
    func fsync(_ fd: FileDescriptor) throws(SystemError) { try base.fsync(fd) }
    func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) { try base.ftruncate(fd, length) }
    func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 { try base.fileSize(fd) }
    func rename(_ from: String, _ to: String) throws(SystemError) {
        if let data = FileManager.default.contents(atPath: to) {
            replaced.withLock { $0.append([UInt8](data)) }
        }
        try base.rename(from, to)
    }
    func link(_ existing: String, _ new: String) throws(SystemError) { try base.link(existing, new) }
    func unlink(_ path: String) throws(SystemError) { try base.unlink(path) }
    func lockExclusive(_ fd: FileDescriptor) throws(SystemError) { try base.lockExclusive(fd) }
}

/// A clock that ticks one second per reading, from a fixed start.
private final class TickingClock: WallTimeTestClock, Sendable {
    private let reading = Mutex<Int64>(1_764_000_000_000)
    func wallTimeMilliseconds() -> Int64 {
        reading.withLock { value in
            value += 1000
            return value
        }
    }
}

/// A deterministic custom conflict resolver: deletes stay deleted, a
/// refused delete takes the server's copy, an edit of a row the server still
/// has keeps the server's fields with the local `n` and `s` on top, and an
/// edit of a row the server deleted comes back as the device showed it.
private let replayCustomResolver: @Sendable (ConflictInput) -> ConflictDecision = { input in
    switch input.shape {
    case .bothDeleted: return .delete
    case .deletedButUpdatedOnServer: return .acceptServer
    case .updatedButDeletedOnServer, .createdButDeletedOnServer: return .keep(input.local ?? [:])
    case .bothUpdated, .createdButExistsOnServer:
        var fields = input.server?.fields ?? [:]
        for name in ["n", "s"] { if let value = input.local?[name] { fields[name] = value } }
        return .keep(fields)
    }
}

/// One journal file (generation) of a history, with the states seen live.
private struct ObservedGeneration {
    /// The file's bytes: its last copy (replaced by a checkpoint, or at the end).
    var bytes: [UInt8] = []
    /// File length after a call, and the live state then.
    var observations: [(length: Int, state: StoreState)] = []
}

/// What checking one history's prefixes found.
private struct PrefixTally {
    var histories = 0
    var calls = 0
    var refusedCalls = 0
    var checkpoints = 0
    var reopens = 0
    var withdrawals = 0
    var batchReplies = 0
    var generations = 0
    var boundaryPrefixes = 0
    var tornPrefixes = 0
    /// States a power cut can leave of one call's write (sectors kept or not, either length), replayed.
    var powerLossStates = 0
    var insideCheckpointPrefixes = 0
    /// Record boundaries no call ended at (a batch reply journals its acknowledgements
    /// and its other outcomes as separate records, in one write): replayed, not compared.
    var unobservedBoundaries = 0
    /// Cuts before the first complete part of a checkpoint file.
    var headerOnlyCheckpointCuts = 0
    /// Conflicts resolved per strategy (`server-wins`, …), failures per kind,
    /// quarantines and what the app did with them, conflicts dismissed or
    /// resolved by the app, calls after which a base row was kept, resyncs.
    var conflictStrategies: [String: Int] = [:]
    var replacements = 0
    var failureKinds: [String: Int] = [:]
    var quarantines = 0
    var retries = 0
    var discards = 0
    var dismissals = 0
    var appResolutions = 0
    var baseRowObservations = 0
    var resyncs = 0

    mutating func add(_ other: PrefixTally) {
        histories += other.histories
        calls += other.calls
        refusedCalls += other.refusedCalls
        checkpoints += other.checkpoints
        reopens += other.reopens
        withdrawals += other.withdrawals
        batchReplies += other.batchReplies
        generations += other.generations
        boundaryPrefixes += other.boundaryPrefixes
        tornPrefixes += other.tornPrefixes
        powerLossStates += other.powerLossStates
        insideCheckpointPrefixes += other.insideCheckpointPrefixes
        unobservedBoundaries += other.unobservedBoundaries
        headerOnlyCheckpointCuts += other.headerOnlyCheckpointCuts
        conflictStrategies.merge(other.conflictStrategies, uniquingKeysWith: +)
        replacements += other.replacements
        failureKinds.merge(other.failureKinds, uniquingKeysWith: +)
        quarantines += other.quarantines
        retries += other.retries
        discards += other.discards
        dismissals += other.dismissals
        appResolutions += other.appResolutions
        baseRowObservations += other.baseRowObservations
        resyncs += other.resyncs
    }
}

/// Drives one random history through a store and records what it saw.
private struct HistoryRun {
    let seed: UInt64
    let steps: Int
    var rng: SeededGenerator
    let directory: TemporaryDirectory
    let path: String
    let archive: ReplacedFileArchive
    let options: LocalStore.Options
    var store: LocalStore
    var generations: [ObservedGeneration] = [ObservedGeneration()]
    var inFlight: Set<OperationID> = []
    /// Operations the last hand-over marked sent (a withdrawal unmarks them).
    var newlyMarked: Set<OperationID> = []
    var serverClock: Int64 = 1_700_000_000_000
    var tally = PrefixTally()
    /// Conflicts and quarantined operations already counted in the tally.
    var seenConflicts: Set<OperationID> = []
    var quarantined: Set<OperationID> = []

    static let kinds = ["pin", "note"]
    static let ids = ["a", "b", "c"]

    static func make(seed: UInt64, steps: Int) async throws -> HistoryRun {
        var rng = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory(prefix: "replay-property-\(seed)")
        let path = directory.file("store.journal")
        let archive = ReplacedFileArchive()
        // Small thresholds checkpoint often; 0 leaves only the explicit ones.
        let threshold = [0, 3, 5, 8, 13][Int.random(in: 0..<5, using: &rng)]
        // A conflict policy per kind (the default for the rest) and a budget of 1 to 3 permanent failures.
        let policies: [ConflictPolicy] = [.serverWins, .clientWins, .mergeFields, .custom(replayCustomResolver)]
        let options = LocalStore.Options(system: archive, clock: TickingClock(), upkeep: threshold > 0 ? .records(beyond: threshold) : .off,
                                         makeRecordID: { "generated" },
                                         conflictPolicies: ["pin": policies[Int.random(in: 0..<4, using: &rng)],
                                                            "note": policies[Int.random(in: 0..<4, using: &rng)]],
                                         defaultConflictPolicy: policies[Int.random(in: 0..<4, using: &rng)],
                                         maximumPermanentFailures: Int.random(in: 1...3, using: &rng),
                                         // Every byte of a history is cut and replayed: without
                                         // preallocation the file holds only records (the zero
                                         // tail has tests of its own: PreallocationTests, PowerLossTests).
                                         preallocationBytes: 0)
        let store: LocalStore
        do {
            store = try await LocalStore.open(path: path, options: options)
        } catch {
            directory.remove()
            throw error
        }
        return HistoryRun(seed: seed, steps: steps, rng: rng, directory: directory, path: path, archive: archive,
                          options: options, store: store)
    }

    func fileBytes() -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }

    // MARK: Random values

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }

    mutating func randomFields() -> [String: FieldValue] {
        var fields: [String: FieldValue] = [:]
        for name in ["n", "s", "t", "set"] where chance(45) {
            switch name {
            case "n": fields[name] = .int(Int64.random(in: -5...5, using: &rng))
            case "s": fields[name] = .string(pick(["", "x", "Café", "日本"]))
            case "t": fields[name] = chance(50) ? .bool(true) : .null
            default: fields[name] = .stringSet(Set(["p", "q", "r"].filter { _ in chance(50) }))
            }
        }
        return fields
    }

    mutating func nextStamp() -> Int64 {
        serverClock += Int64.random(in: 1...3, using: &rng)
        return serverClock
    }

    // MARK: Observing

    /// Waits until the store has journaled everything queued (an empty
    /// acknowledgement is journaled in order behind it and writes nothing),
    /// and until an automatic checkpoint a call started, written beside the
    /// journal while the call returned, has replaced it.
    func settle() async throws {
        try await store.deliverAcknowledgements([])
        await store.waitForUpkeep()
    }

    /// Records the file and the live state after a call that may have written.
    mutating func observe() async throws {
        try await settle()
        let state = try await store.currentState()
        for conflict in state.conflicts where seenConflicts.insert(conflict.id).inserted {
            tally.conflictStrategies[conflict.resolution.strategy.description, default: 0] += 1
            if conflict.resolution.replacement != nil { tally.replacements += 1 }
        }
        let quarantinedNow = Set(state.outbox.operations.filter(\.quarantined).map(\.id))
        tally.quarantines += quarantinedNow.subtracting(quarantined).count
        quarantined = quarantinedNow
        if !state.baseRows.isEmpty { tally.baseRowObservations += 1 }
        let bytes = fileBytes()
        for replaced in archive.takeReplaced() {
            // A checkpoint replaced the file: the old one ends here, at the
            // state the checkpoint holds (a checkpoint never changes the state).
            generations[generations.count - 1].bytes = replaced
            generations[generations.count - 1].observations.append((replaced.count, state))
            generations.append(ObservedGeneration())
            tally.checkpoints += 1
        }
        var current = generations[generations.count - 1]
        if let last = current.observations.last {
            #expect(bytes.count >= last.length, "seed \(seed): the journal shrank without a checkpoint")
            #expect(Array(bytes.prefix(current.bytes.count)) == current.bytes, "seed \(seed): bytes already written changed")
        }
        current.bytes = bytes
        current.observations.append((bytes.count, state))
        generations[generations.count - 1] = current
    }

    /// Runs a call that must be refused, and checks it changed neither the journal nor the state.
    mutating func expectRefused(_ what: String, _ call: (LocalStore) async throws -> Void) async throws {
        let bytesBefore = fileBytes()
        let stateBefore = try await store.currentState()
        var refused = false
        do { try await call(store) } catch { refused = true }
        #expect(refused, "seed \(seed): \(what) was accepted")
        try await settle()
        #expect(fileBytes() == bytesBefore, "seed \(seed): refused \(what) changed the journal")
        #expect(try await store.currentState() == stateBefore, "seed \(seed): refused \(what) changed the state")
        #expect(archive.takeReplaced().isEmpty, "seed \(seed): refused \(what) checkpointed")
        tally.refusedCalls += 1
    }

    // MARK: The history

    mutating func run() async throws {
        tally.histories = 1
        try await observe()  // the empty journal: just a header
        for _ in 0..<steps {
            try await step()
            tally.calls += 1
        }
        try await store.close()
        // The close appended its horizon record, which changes no state:
        // the history checked is what was observed before it.
        let observedLength = generations[generations.count - 1].observations.last?.length ?? 0
        generations[generations.count - 1].bytes = Array(fileBytes().prefix(observedLength))
        #expect(archive.takeReplaced().isEmpty)
    }

    mutating func step() async throws {
        let state = try await store.currentState()
        // 0..<100: edits, hand-overs, outcomes, pulls, refused calls, checkpoints, reopens;
        // 100..<124: quarantine and conflict handling by the app, pulls over queued edits, resyncs.
        let roll = Int.random(in: 0..<124, using: &rng)
        let kind = pick(Self.kinds)
        let id = pick(Self.ids)
        let key = RecordKey(kind: kind, id: id)
        let visible = state.visibleFields(of: key) != nil
        switch roll {
        case 0..<18:  // create
            let fields = randomFields()
            if visible {
                try await expectRefused("create of visible \(key)") { try await $0.create(kind, id: id, fields: fields) }
            } else {
                try await store.create(kind, id: id, fields: fields)
                try await observe()
            }
        case 18..<32:  // update
            let changes = randomFields()
            if visible {
                try await store.update(kind, id: id, changes: changes)
                try await observe()
            } else {
                try await expectRefused("update of missing \(key)") { try await $0.update(kind, id: id, changes: changes) }
            }
        case 32..<41:  // delete
            if visible {
                try await store.delete(kind, id: id)
                try await observe()
            } else {
                try await expectRefused("delete of missing \(key)") { try await $0.delete(kind, id: id) }
            }
        case 41..<53:  // hand operations to a transport
            let ready = try await store.operationsReadyToSend(limit: Int.random(in: 1...3, using: &rng))
            let ids = ready.map(\.id).filter { _ in chance(85) }
            let accepted = try await store.beginSending(ids)
            inFlight.formUnion(accepted.map(\.id))
            newlyMarked.formUnion(ready.filter { !$0.sent && ids.contains($0.id) }.map(\.id))
            try await observe()
        case 53..<70:  // an outcome for an operation (usually one in flight)
            let pending = state.outbox.operations
            guard !pending.isEmpty else { return try await observe() }
            let candidates = pending.filter { inFlight.contains($0.id) }
            if candidates.count > 1 && chance(25) {
                // One push reply for several operations: kept together (one write, possibly several records).
                let replied = Array(candidates.prefix(3))
                var outcomes: [(OperationID, LocalStore.DeliveryOutcome)] = []
                for entry in replied { outcomes.append((entry.id, deliveryOutcome(for: entry, in: state))) }
                try await store.recordOutcomes(outcomes)
                await store.finishSending(replied.map(\.id))
                inFlight.subtract(replied.map(\.id))
                newlyMarked.subtract(replied.map(\.id))
                tally.batchReplies += 1
                return try await observe()
            }
            let entry = (!candidates.isEmpty && chance(85)) ? pick(candidates) : pick(pending)
            if inFlight.contains(entry.id) && chance(12) {
                // The transport was offline: the operation never left the device.
                try await store.withdrawSending([entry.id], newlyMarked: newlyMarked)
                inFlight.remove(entry.id)
                newlyMarked.remove(entry.id)
                tally.withdrawals += 1
                return try await observe()
            }
            try await outcome(for: entry, in: state)
            newlyMarked.remove(entry.id)
            if chance(90) {
                await store.finishSending([entry.id])
                inFlight.remove(entry.id)
            }
            try await observe()
        case 70..<73:  // a late reply for an operation the store no longer has
            try await store.deliverAcknowledgements([Acknowledgement(operationID: .random(using: &rng),
                                                         row: ServerRow(kind: kind, id: id, updatedAt: nextStamp()))])
            try await store.deliverFailure(.random(using: &rng), reason: "late", permanent: chance(50))
            try await observe()
        case 73..<85:  // a pulled page
            var rows: [ServerRow] = []
            for rowID in Self.ids where chance(40) {
                let stamp = nextStamp()
                rows.append(chance(25) ? ServerRow(kind: kind, id: rowID, updatedAt: stamp, deletedAt: stamp)
                                       : ServerRow(kind: kind, id: rowID, fields: randomFields(), updatedAt: stamp))
            }
            let cursor: PullCursor? = chance(15) ? nil : rows.last.map { PullCursor(updatedAt: $0.updatedAt, id: $0.id) }
                ?? PullCursor(updatedAt: nextStamp(), id: "z")
            try await store.applyPulledPage(kind: kind, rows: rows, cursor: cursor)
            try await observe()
        case 85..<91:  // invalid calls: refused before anything is kept
            switch Int.random(in: 0..<5, using: &rng) {
            case 0:
                try await expectRefused("a page with a duplicate id") {
                    try await $0.applyPulledPage(kind: kind, rows: [ServerRow(kind: kind, id: "a", updatedAt: 1), ServerRow(kind: kind, id: "a", updatedAt: 2)],
                                                 cursor: nil)
                }
            case 1:
                if state.cursors[kind] != nil {
                    try await expectRefused("a cursor behind the current one") {
                        try await $0.applyPulledPage(kind: kind, rows: [], cursor: PullCursor(updatedAt: 0, id: "a"))
                    }
                } else {
                    try await expectRefused("a row with an empty id") {
                        try await $0.applyPulledPage(kind: kind, rows: [ServerRow(kind: kind, id: "", updatedAt: 1)], cursor: nil)
                    }
                }
            case 2:
                try await expectRefused("an id of 65 bytes") { try await $0.create(kind, id: String(repeating: "x", count: 65), fields: [:]) }
            case 3:
                try await expectRefused("an empty kind") { try await $0.update("", id: id, changes: [:]) }
            default:
                if let entry = state.outbox.operations.first {
                    let other = RecordKey(kind: entry.key.kind, id: entry.key.id + "-other")
                    try await expectRefused("an acknowledgement with another record's row") {
                        try await $0.deliverAcknowledgements([Acknowledgement(operationID: entry.id, row: ServerRow(kind: other.kind, id: other.id, updatedAt: 5))])
                    }
                } else {
                    try await expectRefused("an empty field name") { try await $0.create(kind, id: id, fields: ["": .null]) }
                }
            }
        case 91..<95:  // an explicit checkpoint
            try await store.checkpoint()
            try await observe()
        case 100..<105:  // the app retries or discards a quarantined operation
            let quarantined = state.outbox.operations.filter(\.quarantined)
            if !quarantined.isEmpty {
                let entry = pick(quarantined)
                if chance(55) {
                    try await store.retryQuarantined(entry.id)
                    tally.retries += 1
                } else {
                    try await store.discardQuarantined(entry.id)
                    tally.discards += 1
                }
                try await observe()
            } else {
                let other = state.outbox.operations.isEmpty ? OperationID.random(using: &rng) : pick(state.outbox.operations).id
                if chance(50) {
                    try await expectRefused("a retry of an operation that is not quarantined") { try await $0.retryQuarantined(other) }
                } else {
                    try await expectRefused("a discard of an operation that is not quarantined") { try await $0.discardQuarantined(other) }
                }
            }
        case 105..<110:  // the app dismisses a conflict or resolves it its own way
            if !state.conflicts.isEmpty {
                let conflict = pick(state.conflicts)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0:
                    try await store.dismissConflict(conflict.id)
                    tally.dismissals += 1
                case 1:
                    try await store.resolveConflict(conflict.id, keeping: .acceptServer)
                    tally.appResolutions += 1
                case 2:
                    try await store.resolveConflict(conflict.id, keeping: .delete)
                    tally.appResolutions += 1
                default:
                    let fields = conflict.operation.fields.merging(randomFields()) { _, new in new }
                    try await store.resolveConflict(conflict.id, keeping: .keep(fields))
                    tally.appResolutions += 1
                }
                try await observe()
            } else {
                let stranger = OperationID.random(using: &rng)
                if chance(50) {
                    try await expectRefused("a dismissal of no conflict") { try await $0.dismissConflict(stranger) }
                } else {
                    try await expectRefused("a resolution of no conflict") { try await $0.resolveConflict(stranger, keeping: .acceptServer) }
                }
            }
        case 110..<116:  // a pull that replaces rows with queued edits on them (their base copies are kept)
            let edited = state.outbox.keys.filter { $0.kind == kind }.sorted(by: <)
            var rows: [ServerRow] = []
            for key in edited where chance(80) {
                let stamp = nextStamp()
                if chance(15) {
                    rows.append(ServerRow(kind: kind, id: key.id, updatedAt: stamp, deletedAt: stamp))
                } else {
                    let fields = (state.snapshot[key]?.fields ?? [:]).merging(randomFields()) { _, new in new }
                    rows.append(ServerRow(kind: kind, id: key.id, fields: fields, updatedAt: stamp))
                }
            }
            let cursor = rows.last.map { PullCursor(updatedAt: $0.updatedAt, id: $0.id) }
            try await store.applyPulledPage(kind: kind, rows: rows, cursor: cursor)
            try await observe()
        case 116..<121:  // a resync: the kind's snapshot is replaced by a full re-pull
            var rows: [ServerRow] = []
            for rowID in Self.ids where chance(55) {
                let stamp = nextStamp()
                rows.append(chance(10) ? ServerRow(kind: kind, id: rowID, updatedAt: stamp, deletedAt: stamp)
                                       : ServerRow(kind: kind, id: rowID, fields: randomFields(), updatedAt: stamp))
            }
            if chance(12) {
                var bad = rows
                if chance(50) || bad.isEmpty {
                    bad.append(ServerRow(kind: kind == "pin" ? "note" : "pin", id: "a", updatedAt: nextStamp()))
                } else {
                    bad.append(bad[0])
                }
                try await expectRefused("a resync with a row of another kind or a duplicate id") {
                    try await $0.replaceSnapshot(kind: kind, rows: bad, cursor: nil)
                }
                return
            }
            let cursor: PullCursor?
            switch Int.random(in: 0..<10, using: &rng) {
            case 0, 1: cursor = nil
            case 2, 3:  // behind the current cursor
                cursor = PullCursor(updatedAt: (state.cursors[kind]?.updatedAt ?? serverClock) - Int64.random(in: 1...40, using: &rng), id: "a")
            default: cursor = rows.last.map { PullCursor(updatedAt: $0.updatedAt, id: $0.id) } ?? PullCursor(updatedAt: nextStamp(), id: "z")
            }
            try await store.replaceSnapshot(kind: kind, rows: rows, cursor: cursor)
            tally.resyncs += 1
            try await observe()
        case 121..<124:  // a failure of each kind for a queued operation (deleted-or-no-access quarantines at once)
            let pending = state.outbox.operations
            guard !pending.isEmpty else { return try await observe() }
            let entry = pick(pending)
            let failure = pick([FailureKind.transient, .permanent, .deletedOrNoAccess])
            tally.failureKinds[failure.description, default: 0] += 1
            try await store.recordOutcomes([(entry.id, .failure(failure, reason: "HTTP \(pick([403, 404, 503]))"))])
            try await observe()
        default:  // close and reopen: replay must rebuild the live state
            try await store.close()
            store = try await reopenForReplay(path: path, options: options)
            inFlight = []
            newlyMarked = []
            #expect(try await store.currentState() == state, "seed \(seed): reopening changed the state")
            tally.reopens += 1
            try await observe()
        }
    }

    /// What the server says about `entry`.
    mutating func outcome(for entry: OutboxOperation, in state: StoreState) async throws {
        let operation = entry.operation
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<45:
            let stamp = nextStamp()
            let row: ServerRow
            switch operation.kind {
            case .create:
                row = ServerRow(kind: operation.entity, id: operation.recordID, fields: operation.fields, updatedAt: stamp)
            case .update:
                var fields = state.snapshot[operation.key]?.fields ?? [:]
                fields.merge(operation.fields) { _, new in new }
                row = ServerRow(kind: operation.entity, id: operation.recordID, fields: fields, updatedAt: stamp)
            case .delete:
                row = ServerRow(kind: operation.entity, id: operation.recordID, updatedAt: stamp, deletedAt: stamp)
            }
            try await store.deliverAcknowledgements([Acknowledgement(operationID: entry.id, row: row)])
        case 45..<62:
            tally.failureKinds["transient", default: 0] += 1
            try await store.deliverFailure(entry.id, reason: pick(["timeout", "HTTP 503", "offline"]), permanent: false)
        case 62..<72:
            tally.failureKinds["permanent", default: 0] += 1
            try await store.deliverFailure(entry.id, reason: pick(["HTTP 403", "invalid value"]), permanent: true)
        case 72..<78:
            let failure = pick([FailureKind.transient, .permanent, .deletedOrNoAccess])
            tally.failureKinds[failure.description, default: 0] += 1
            try await store.recordOutcomes([(entry.id, .failure(failure, reason: "HTTP 404"))])
        case 78..<95:
            try await store.deliverConflict(entry.id, server: conflictCopy(for: entry, in: state))
        default:
            break  // the reply was lost
        }
    }

    /// A server reply for `entry` as one outcome of a batch reply.
    mutating func deliveryOutcome(for entry: OutboxOperation, in state: StoreState) -> LocalStore.DeliveryOutcome {
        let operation = entry.operation
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<50:
            let stamp = nextStamp()
            switch operation.kind {
            case .create:
                return .acknowledged(ServerRow(kind: operation.entity, id: operation.recordID, fields: operation.fields, updatedAt: stamp))
            case .update:
                var fields = state.snapshot[operation.key]?.fields ?? [:]
                fields.merge(operation.fields) { _, new in new }
                return .acknowledged(ServerRow(kind: operation.entity, id: operation.recordID, fields: fields, updatedAt: stamp))
            case .delete:
                return .acknowledged(ServerRow(kind: operation.entity, id: operation.recordID, updatedAt: stamp, deletedAt: stamp))
            }
        case 50..<70:
            return .conflicted(server: conflictCopy(for: entry, in: state))
        case 70..<88:
            let permanent = chance(40)
            tally.failureKinds[permanent ? "permanent" : "transient", default: 0] += 1
            return .failure(permanent ? .permanent : .transient, reason: pick(["timeout", "HTTP 409", "HTTP 403"]))
        default:
            let failure = pick([FailureKind.transient, .permanent, .deletedOrNoAccess])
            tally.failureKinds[failure.description, default: 0] += 1
            return .failure(failure, reason: "HTTP 404")
        }
    }

    /// The server's copy in a conflict: mostly the copy the device edited with
    /// some fields changed (so merges find fields on both sides), sometimes
    /// deleted (no copy, or a tombstone).
    mutating func conflictCopy(for entry: OutboxOperation, in state: StoreState) -> ServerRow? {
        let operation = entry.operation
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<12:
            return nil
        case 12..<24:
            let stamp = nextStamp()
            return ServerRow(kind: operation.entity, id: operation.recordID, updatedAt: stamp, deletedAt: stamp)
        default:
            let edited = (state.baseRow(for: entry) ?? state.snapshot[operation.key])?.fields ?? [:]
            return ServerRow(kind: operation.entity, id: operation.recordID, fields: edited.merging(randomFields()) { _, new in new },
                             updatedAt: nextStamp())
        }
    }

    // MARK: Checking every prefix

    /// Replays prefixes of every generation; `everyByte` cuts at every byte
    /// offset and tries every power-loss state of each call's write,
    /// otherwise it cuts at every record boundary and tries one random state per write.
    mutating func checkPrefixes(everyByte: Bool) throws {
        tally.generations = generations.count
        let copy = directory.file("prefix.journal")
        for (index, generation) in generations.enumerated() {
            let bytes = generation.bytes
            #expect(generation.observations.last?.length == bytes.count, "seed \(seed): generation \(index) ends unobserved")
            let header = try #require(try? JournalHeader.decode(bytes), "seed \(seed): generation \(index) has no header")
            #expect((header.continuesGeneration != 0) == (index > 0), "seed \(seed): generation \(index) continues \(header.continuesGeneration)")
            // Record boundaries, from the frames' length fields.
            var boundaries = [header.headerLength]
            var offset = header.headerLength
            while offset + JournalFormat.recordHeaderLength <= bytes.count {
                // Format 2: the payload length is the third field of the record header.
                let length = Int(bytes[offset + 8]) | Int(bytes[offset + 9]) << 8 | Int(bytes[offset + 10]) << 16 | Int(bytes[offset + 11]) << 24
                offset += JournalFormat.recordHeaderLength + length
                boundaries.append(offset)
            }
            #expect(offset == bytes.count, "seed \(seed): generation \(index) does not end at a record boundary")
            // A checkpoint file is complete once its parts are: at its first
            // observation, less the closing sync-horizon record after its end part.
            let checkpointEnd = index == 0 ? header.headerLength : generation.observations[0].length - JournalFormat.recordHeaderLength
            var stateAt: [Int: StoreState] = [:]
            for observation in generation.observations {
                if let earlier = stateAt[observation.length] {
                    #expect(earlier == observation.state, "seed \(seed): two states at one length \(observation.length)")
                }
                stateAt[observation.length] = observation.state
            }
            var cuts = Set(boundaries)
            if everyByte { cuts.formUnion(header.headerLength...bytes.count) }
            // Each call's write after the file was complete, as a power cut can leave it.
            let lengths = generation.observations.map(\.length).filter { $0 >= checkpointEnd }
            for (durable, written) in zip(lengths, lengths.dropFirst()) where written > durable {
                try checkPowerLossStates(bytes, durable: durable, written: written, boundaries: boundaries, stateAt: stateAt,
                                         generation: index, every: everyByte)
            }
            _ = FileManager.default.createFile(atPath: copy, contents: Data(bytes))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: copy))
            defer { try? handle.close() }
            var boundaryIndex = boundaries.count - 1
            for cut in cuts.sorted(by: >) {
                try handle.truncate(atOffset: UInt64(cut))
                while boundaries[boundaryIndex] > cut { boundaryIndex -= 1 }
                let boundary = boundaries[boundaryIndex]
                try checkPrefix(copy, cut: cut, boundary: boundary, checkpointEnd: checkpointEnd, headerLength: header.headerLength,
                                expected: stateAt[boundary], generation: index,
                                tornBytesAreZero: !bytes[boundary..<cut].contains { $0 != 0 })
            }
        }
    }

    /// The file synced at `durable` bytes, the call's write up to `written`
    /// not yet: tries every state a power cut can leave (or, unless `every`,
    /// one drawn at random). Replay must give the live state at a record
    /// boundary from `durable` to `written` (clean or a torn tail, never
    /// refused), as recorded there.
    mutating func checkPowerLossStates(_ bytes: [UInt8], durable: Int, written: Int, boundaries: [Int], stateAt: [Int: StoreState],
                                       generation: Int, every: Bool) throws {
        let disk = SimulatedDisk()
        disk.createDirectory("/replay")
        let path = "/replay/store.journal"
        disk.setContents(of: path, to: Array(bytes[..<durable]))
        let fd = try disk.open(path, .readWrite, 0)
        try FileIO(disk).writeAll(fd, Array(bytes[durable..<written]), at: Int64(durable), path: path)
        let states = disk.powerLossStates()
        let modes: [SimulatedDisk.CrashMode]
        if every && states.stateCount <= 1_024 {
            modes = Array(states)
        } else {
            modes = (0..<(every ? 300 : 1)).map { _ in states.randomState(using: &rng) }
        }
        for mode in modes {
            let label = "seed \(seed), generation \(generation), write \(durable)..<\(written), \(mode)"
            let copy = disk.snapshot()
            copy.crash(mode)
            tally.powerLossStates += 1
            let result: Replayer.Result
            do { result = try Replayer.replay(path: path, system: copy) } catch {
                Issue.record("\(label): replay refused: \(error)")
                continue
            }
            let reached = Int(result.report.validBytes)
            #expect(result.report.status.name != "corrupt", "\(label): \(result.report.status)")
            guard reached >= durable && reached <= written && boundaries.contains(reached) else {
                Issue.record("\(label): replay ends at \(reached), not at a record boundary from \(durable) to \(written)")
                continue
            }
            guard let expected = stateAt[reached] else { continue }   // between the records of one call
            if result.state != expected {
                Issue.record("\(label): replay differs from the live state at \(reached)\n replayed: \(describe(result.state))\n live:     \(describe(expected))")
            }
        }
    }

    mutating func checkPrefix(_ copy: String, cut: Int, boundary: Int, checkpointEnd: Int, headerLength: Int,
                              expected: StoreState?, generation: Int, tornBytesAreZero: Bool) throws {
        let label = "seed \(seed), generation \(generation), cut at \(cut) (record boundary \(boundary))"
        if boundary < checkpointEnd {
            // Inside a checkpoint, before its end part: never a smaller state.
            // Also with no complete part at all: a file that continues a generation starts with a checkpoint.
            if boundary == headerLength { tally.headerOnlyCheckpointCuts += 1 }
            tally.insideCheckpointPrefixes += 1
            do {
                let result = try Replayer.replay(path: copy)
                Issue.record("\(label): a cut checkpoint replayed as a state of \(result.records) records")
            } catch let failure as Replayer.Failure {
                guard case .incompleteCheckpoint = failure else {
                    Issue.record("\(label): \(failure)" as Comment)
                    return
                }
            }
            return
        }
        let result = try Replayer.replay(path: copy)
        if cut == boundary {
            tally.boundaryPrefixes += 1
            #expect(result.report.status == .clean, "\(label): \(result.report.status)")
        } else if tornBytesAreZero {
            // The bytes kept of the cut record happen to be zeros: the end
            // of the journal followed by preallocated space, not damage.
            tally.tornPrefixes += 1
            #expect(result.report.status == .clean, "\(label): \(result.report.status)")
            #expect(result.report.validBytes == Int64(boundary), "\(label)")
            #expect(result.report.preallocatedBytes == Int64(cut - boundary), "\(label)")
        } else {
            tally.tornPrefixes += 1
            #expect(result.report.status.name == "torn-tail", "\(label): \(result.report.status)")
            #expect(result.report.validBytes == Int64(boundary), "\(label)")
        }
        guard let expected else {
            // A call that appended several records: no live state between them.
            if cut == boundary { tally.unobservedBoundaries += 1 }
            return
        }
        if result.state != expected {
            Issue.record("\(label): replay differs from the live state\n replayed: \(describe(result.state))\n live:     \(describe(expected))")
        }
    }

    func describe(_ state: StoreState) -> String {
        "rows \(state.snapshot.keys.sorted(by: <)), outbox \(state.outbox.operations.map { "\($0.operation.kind) \($0.key) sent=\($0.sent) attempts=\($0.attempts) permanent=\($0.permanentFailures) quarantined=\($0.quarantined)" }), "
            + "cursors \(state.cursors), conflicts \(state.conflicts.map { "\($0.id) \($0.resolution.strategy)" }), base rows \(state.baseRows.keys.sorted(by: <)), rejections \(state.rejections.count)"
    }

    func removeFiles() {
        directory.remove()
    }
}

@Suite("Replay of every journal prefix")
struct ReplayPropertyTests {
    /// Shards of histories, so the two cores share the work.
    static let shards = 0..<8
    static let historiesPerShard = 180
    static let stepsPerHistory = 60

    fileprivate static func runHistories(seeds: [UInt64], steps: Int, everyByte: Bool) async throws -> PrefixTally {
        var total = PrefixTally()
        for seed in seeds {
            var run = try await HistoryRun.make(seed: seed, steps: steps)
            defer { run.removeFiles() }
            try await run.run()
            try run.checkPrefixes(everyByte: everyByte)
            total.add(run.tally)
        }
        return total
    }

    @Test("replay: replay of every record-boundary prefix, and of one power-loss state of each call's write, equals the live state",
          arguments: shards)
    func everyBoundaryPrefix(shard: Int) async throws {
        let seeds = (0..<Self.historiesPerShard).map { UInt64(1_000 + shard * Self.historiesPerShard + $0) }
        let tally = try await Self.runHistories(seeds: seeds, steps: Self.stepsPerHistory, everyByte: false)
        #expect(tally.histories == Self.historiesPerShard)
        #expect(tally.boundaryPrefixes > tally.histories * 10)
        #expect(tally.powerLossStates > tally.histories * 10)
        #expect(tally.checkpoints > 0)
        #expect(tally.insideCheckpointPrefixes > 0)
        #expect(tally.headerOnlyCheckpointCuts > 0)
        #expect(tally.batchReplies > 0)
        // Every policy, every failure kind, quarantines and what the app does with them, base rows, resyncs.
        #expect(Set(tally.conflictStrategies.keys) == ["server-wins", "client-wins", "merge-fields", "custom"] as Set,
                "\(tally.conflictStrategies)")
        #expect(tally.replacements > 0)
        #expect(Set(tally.failureKinds.keys) == ["transient", "permanent", "deleted-or-no-access"] as Set, "\(tally.failureKinds)")
        #expect(tally.quarantines > 0 && tally.retries > 0 && tally.discards > 0)
        #expect(tally.dismissals > 0 && tally.appResolutions > 0)
        #expect(tally.baseRowObservations > 0)
        #expect(tally.resyncs > 0)
        print("replay property, shard \(shard): \(tally)")
    }

    @Test("replay: replay of the journal cut at every byte offset equals the live state at the record boundary before the cut",
          arguments: 0..<4)
    func everyBytePrefix(shard: Int) async throws {
        let seeds = (0..<6).map { UInt64(90_000 + shard * 6 + $0) }
        let tally = try await Self.runHistories(seeds: seeds, steps: 40, everyByte: true)
        #expect(tally.tornPrefixes > tally.boundaryPrefixes * 10)
        #expect(tally.powerLossStates > tally.boundaryPrefixes)
        print("replay property, every byte, shard \(shard): \(tally)")
    }
}
