import Foundation
import SyncJournalPlatform
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

// Simulated power loss. A workload runs on a SimulatedDisk
// that freezes after k system calls (nothing more reaches the disk, every
// later call fails), then the power is cut: unsynced bytes are kept, lost or
// torn at any byte, unsynced directory changes (a checkpoint's rename) may be
// undone. After every crash the store must reopen, keep every edit it
// acknowledged, and show exactly the state after some prefix of the edits
// attempted that contains every acknowledged one: never a hole, never an
// edit that was not made.
//
// Expected states come from a reference run of the same workload on a
// fault-free disk, recorded after every step. Workloads are steps chosen
// from a seed that decide what to do from the store's state when they run,
// so the crashed run makes the same calls as the reference up to its crash
// point. Every failure names the seed, the crash point and the crash modes.

private let directory = "/device"
private let journalPath = "/device/store.journal"
private let checkpointTemporary = "/device/store.journal.checkpoint"

/// Preallocation in small steps: the journal is extended often, so crashes
/// land in extensions too, and each crash copies little.
private let powerLossPreallocation = 4096

/// Options for a store on `disk`, as a process of its current boot (so
/// nothing the store does after a crash reaches the disk).
private func storeOptions(_ disk: SimulatedDisk, checkpointThreshold: Int) -> LocalStore.Options {
    LocalStore.Options(system: disk.process(), clock: StillClock(),
                       upkeep: checkpointThreshold > 0 ? .records(beyond: checkpointThreshold) : .off,
                       conflictPolicies: ["note": .clientWins, "tag": .mergeFields], preallocationBytes: powerLossPreallocation)
}

// MARK: What is compared

/// The store's state without its random operation ids: what the app can see
/// (records, queued operations with their delivery state, conflicts) and
/// what the next sync works from (snapshot, base rows, cursors).
private struct StorePicture: Hashable, CustomStringConvertible {
    struct Edit: Hashable {
        var kind: OperationKind
        var key: RecordKey
        var fields: [String: FieldValue]
        var base: Int64?

        init(_ operation: JournalOperation) {
            kind = operation.kind
            key = operation.key
            fields = operation.fields
            base = operation.baseUpdatedAt
        }
    }

    struct Queued: Hashable {
        var edit: Edit
        var sent: Bool
        var attempts: Int
        var lastError: String?
        var permanentFailures: Int
        var lastFailure: FailureKind?
        var quarantined: Bool
    }

    struct Conflict: Hashable {
        var edit: Edit
        var server: ServerRow?
        var baseRow: ServerRow?
        var strategy: ConflictResolution.Strategy
        var replacement: Edit?
        var lostFields: [String]
    }

    var visible: [RecordKey: [String: FieldValue]] = [:]
    var snapshot: [RecordKey: ServerRow] = [:]
    var outbox: [Queued] = []
    var conflicts: [Conflict] = []
    var cursors: [String: PullCursor] = [:]
    var baseRows: [RecordKey: ServerRow] = [:]
    var rejections = 0
    /// What the device knows of its server (identity, seen stamp, mismatch).
    var server = KnownServer()

    /// The picture of `state`, limited to records of `kinds` (all when `nil`).
    init(_ state: StoreState, kinds: Set<String>? = nil, server watchesServer: Bool = false) {
        func mine(_ kind: String) -> Bool { kinds?.contains(kind) ?? true }
        snapshot = state.snapshot.filter { mine($0.key.kind) }
        baseRows = state.baseRows.filter { mine($0.key.kind) }
        cursors = state.cursors.filter { mine($0.key) }
        for entry in state.outbox.operations where mine(entry.key.kind) {
            outbox.append(Queued(edit: Edit(entry.operation), sent: entry.sent, attempts: entry.attempts, lastError: entry.lastError,
                                 permanentFailures: entry.permanentFailures, lastFailure: entry.lastFailure, quarantined: entry.quarantined))
        }
        for conflict in state.conflicts where mine(conflict.operation.entity) {
            conflicts.append(Conflict(edit: Edit(conflict.operation), server: conflict.server, baseRow: conflict.baseRow,
                                      strategy: conflict.resolution.strategy, replacement: conflict.resolution.replacement.map(Edit.init),
                                      lostFields: conflict.resolution.lostFields))
        }
        rejections = state.rejections.filter { mine($0.operation.entity) }.count
        // The server is the whole store's: only a lane that owns it compares it.
        if kinds == nil || watchesServer { server = state.server }
        var keys = Set(snapshot.keys)
        for key in state.outbox.keys where mine(key.kind) { keys.insert(key) }
        for key in keys { visible[key] = state.visibleFields(of: key) }
    }

    var description: String {
        let records = visible.keys.sorted(by: <).map { key in
            "\(key.kind)/\(key.id)" + (snapshot[key].map { "@\($0.updatedAt)" } ?? "") + " \(visible[key]!.count) fields"
        }
        let queued = outbox.map { "\($0.edit.kind) \($0.edit.key.kind)/\($0.edit.key.id)\($0.sent ? " sent" : "")\($0.quarantined ? " quarantined" : "") attempts \($0.attempts)" }
        return "records [\(records.joined(separator: ", "))]; outbox [\(queued.joined(separator: ", "))]; "
            + "\(conflicts.count) conflicts; cursors \(cursors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }); \(baseRows.count) base rows"
            + "; server \(server.identity?.text ?? "-") seen \(server.seenStamp.map { String($0) } ?? "-")\(server.mismatch == nil ? "" : " stopped")"
    }
}

// MARK: Workloads

/// One store call of a workload (at most one journal write).
private struct Step: Sendable {
    var label: String
    var run: @Sendable (LocalStore) async throws -> Void
    /// For a step journaled as several records, the states a power cut may
    /// leave part-way through it (from the state before the step); `nil` for
    /// a step that is one record, durable whole or not at all.
    var partialStates: (@Sendable (StoreState) -> [StoreState])? = nil
}

/// Steps run in order by one caller; a workload's lanes run concurrently.
/// Each lane touches only records of its `kinds`, so its effects can be
/// compared on their own whatever the interleaving.
private struct Lane: Sendable {
    var kinds: Set<String>
    var steps: [Step]
    /// Whether the lane's steps change what the device knows of its server (compared then).
    var watchesServer = false
}

/// Record fields for step `index`: small usually, sometimes a few hundred
/// bytes (so a torn write can fall inside a long record).
private func fields<G: RandomNumberGenerator>(_ index: Int, using random: inout G) -> [String: FieldValue] {
    let length = Int.random(in: 0..<10, using: &random) == 0 ? Int.random(in: 100...600, using: &random) : Int.random(in: 0...24, using: &random)
    var result: [String: FieldValue] = ["n": .int(Int64(index)), "s": .string(String(repeating: "abcdefgh", count: length / 8 + 1).prefix(length).description)]
    if Bool.random(using: &random) { result["flag"] = .bool(index % 2 == 0) }
    // Every third step also carries a timestamp, a UUID and nested arrays and objects
    // (chosen by the index, so the random choices of the workload stay as they were).
    if index % 3 == 0 {
        let at = Int64(index) * 1_000_003
        result["nested"] = .object(["at": .timestamp(-at), "list": .array([.int(Int64(index)), .array([.null]), .object([:])]),
                                    "id": .uuid(UUID(uuid: (UInt8(truncatingIfNeeded: index), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)))])
    }
    return result
}

/// The records of `kind` the app can see now, in id order.
private func visibleIDs(_ state: StoreState, kind: String) -> [String] {
    var keys = Set(state.snapshot.keys.filter { $0.kind == kind })
    for key in state.outbox.keys where key.kind == kind { keys.insert(key) }
    return keys.filter { state.visibleFields(of: $0) != nil }.map(\.id).sorted()
}

/// An edit decided when it runs: a create, or an update or delete of a
/// visible record of `kind`. With `ids`, records come from that small set
/// (so edits of one record pile up and the compactor merges them).
private func editStep<G: RandomNumberGenerator>(kind: String, index: Int, ids: [String]? = nil, using random: inout G) -> Step {
    let choice = Int.random(in: 0..<100, using: &random)
    let pick = Int.random(in: 0..<1_000, using: &random)
    let payload = fields(index, using: &random)
    let changes = Bool.random(using: &random) ? ["n": FieldValue.int(Int64(index))] : payload
    return Step(label: "edit \(kind) #\(index)") { store in
        let visible = visibleIDs(try await store.currentState(), kind: kind)
        if let ids {
            let id = ids[pick % ids.count]
            if !visible.contains(id) {
                try await store.create(kind, id: id, fields: payload)
            } else if choice < 65 {
                try await store.update(kind, id: id, changes: changes)
            } else {
                try await store.delete(kind, id: id)
            }
            return
        }
        if visible.isEmpty || choice < 40 {
            try await store.create(kind, id: "\(kind)-\(index)", fields: payload)
        } else if choice < 80 {
            try await store.update(kind, id: visible[pick % visible.count], changes: changes)
        } else {
            try await store.delete(kind, id: visible[pick % visible.count])
        }
    }
}

/// Hands up to `limit` ready operations to an imaginary transport (the
/// durable "sent" mark: compaction stops merging into them).
private func sendStep(limit: Int, index: Int) -> Step {
    Step(label: "send #\(index)") { store in
        let ready = try await store.operationsReadyToSend(limit: limit)
        if !ready.isEmpty { try await store.beginSending(ready.map(\.id)) }
    }
}

/// The server's stamp for step `index`: increases with the step, so cursors never go back.
private func stamp(_ index: Int) -> Int64 { 10_000 + Int64(index) * 10 }

/// The server answers for the first sent operation: acknowledged (often),
/// conflicted (its row changed or was deleted), or failed (transient,
/// permanent, gone). One journal write.
private func replyStep<G: RandomNumberGenerator>(index: Int, using random: inout G) -> Step {
    let choice = Int.random(in: 0..<12, using: &random)
    let serverFields: [String: FieldValue] = ["srv": .int(Int64(index)), "n": .int(-Int64(index))]
    return Step(label: "reply #\(index)") { store in
        let state = try await store.currentState()
        guard let entry = state.outbox.operations.first(where: { $0.sent && !$0.quarantined }) else { return }
        let key = entry.key
        let outcome: LocalStore.DeliveryOutcome
        switch choice {
        case 0..<6:
            let row: ServerRow
            switch entry.operation.kind {
            case .create: row = ServerRow(kind: key.kind, id: key.id, fields: entry.operation.fields, updatedAt: stamp(index))
            case .update:
                let merged = (state.snapshot[key]?.fields ?? [:]).merging(entry.operation.fields) { _, new in new }
                row = ServerRow(kind: key.kind, id: key.id, fields: merged, updatedAt: stamp(index))
            case .delete: row = ServerRow(kind: key.kind, id: key.id, updatedAt: stamp(index), deletedAt: stamp(index))
            }
            outcome = .acknowledged(row)
        case 6, 7:
            outcome = .conflicted(server: ServerRow(kind: key.kind, id: key.id, fields: serverFields, updatedAt: stamp(index)))
        case 8:
            outcome = .conflicted(server: nil)
        case 9:
            outcome = .failure(.transient, reason: "HTTP 503 at \(index)")
        case 10:
            outcome = .failure(.permanent, reason: "HTTP 422 at \(index)")
        default:
            outcome = .failure(.deletedOrNoAccess, reason: "HTTP 404 at \(index)")
        }
        try await store.recordOutcomes([(entry.id, outcome)])
        await store.finishSending([entry.id])
    }
}

/// A pulled page of `kind`: rows written by another device (some deleted) and the cursor after them.
private func pullStep<G: RandomNumberGenerator>(kind: String, index: Int, using random: inout G) -> Step {
    let count = Int.random(in: 0...3, using: &random)
    var rows: [ServerRow] = []
    var used = Set<String>()
    for offset in 0..<count {
        let id = "\(kind)-server-\(Int.random(in: 0..<(index + 2), using: &random))"
        guard used.insert(id).inserted else { continue }
        let at = stamp(index) + Int64(offset)
        if Int.random(in: 0..<4, using: &random) == 0 {
            rows.append(ServerRow(kind: kind, id: id, updatedAt: at, deletedAt: at))
        } else {
            rows.append(ServerRow(kind: kind, id: id, fields: fields(index, using: &random), updatedAt: at))
        }
    }
    let cursor = rows.last.map { PullCursor(updatedAt: $0.updatedAt, id: $0.id) }
    let page = rows
    return Step(label: "pull \(kind) #\(index)") { store in
        try await store.applyPulledPage(kind: kind, rows: page, cursor: cursor)
    }
}

/// The app handles the first quarantined operation or conflict: retries or
/// discards it, dismisses it or accepts the server's copy. (Resolving with an
/// edit journals two records; see `resolvingAConflictWithAnEditIsAtomic`.)
private func attendStep<G: RandomNumberGenerator>(index: Int, using random: inout G) -> Step {
    let choice = Int.random(in: 0..<4, using: &random)
    return Step(label: "attend #\(index)") { store in
        let state = try await store.currentState()
        if let quarantined = state.outbox.operations.first(where: \.quarantined) {
            if choice < 2 { try await store.retryQuarantined(quarantined.id) } else { try await store.discardQuarantined(quarantined.id) }
        } else if let conflict = state.conflicts.first {
            if choice < 2 { try await store.dismissConflict(conflict.id) } else { try await store.resolveConflict(conflict.id, keeping: .acceptServer) }
        }
    }
}

/// The transport found it was offline: what is in flight is withdrawn (and unmarked).
private func withdrawStep(index: Int) -> Step {
    Step(label: "withdraw #\(index)") { store in
        let state = try await store.currentState()
        var inFlight: [OperationID] = []
        for entry in state.outbox.operations {
            if await store.isInFlight(entry.id) { inFlight.append(entry.id) }
        }
        if !inFlight.isEmpty { try await store.withdrawSending(inFlight, newlyMarked: Set(inFlight)) }
    }
}

private func checkpointStep(index: Int) -> Step {
    Step(label: "checkpoint #\(index)") { store in try await store.checkpoint() }
}

// MARK: Running and crashing

/// Tallies of one test, printed as one line.
private struct Tally {
    var workloads = 0
    var steps = 0
    var planned = 0
    var calls = 0
    var sequentialCalls = 0
    var crashPoints = 0
    var acknowledgedChecked = 0
    var checkpointsCrashedInside = 0
    var checkpointPhases: [String: Int] = [:]
    var renamesUndone = 0
    var filesTorn = 0
    var recoveriesCrashed = 0
    var modes: [String: Int] = [:]
    var prefixesBeyondAcknowledged = 0

    func line(_ name: String, seconds: Double? = nil) -> String {
        let phases = checkpointPhases.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let modeText = modes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "power-loss \(name): \(workloads) workloads of \(steps) steps, \(crashPoints) crash points, \(acknowledgedChecked) acknowledged steps checked, "
            + "\(checkpointsCrashedInside) checkpoints crashed inside\(phases.isEmpty ? "" : " (\(phases))"), \(renamesUndone) renames undone, "
            + "\(filesTorn) torn files, \(recoveriesCrashed) recoveries crashed, \(prefixesBeyondAcknowledged) unacknowledged edits found durable "
            + "[\(modeText)]"
    }
}

/// Runs `lanes` concurrently on `store`; each lane stops at its first
/// failing step. Returns, per lane, the steps that returned without throwing
/// (acknowledged) and the steps attempted.
private func run(_ lanes: [Lane], on store: LocalStore) async -> [(acknowledged: Int, attempted: Int)] {
    await withTaskGroup(of: (Int, Int, Int).self) { group in
        for (number, lane) in lanes.enumerated() {
            group.addTask {
                for (index, step) in lane.steps.enumerated() {
                    do { try await step.run(store) } catch { return (number, index, index + 1) }
                }
                return (number, lane.steps.count, lane.steps.count)
            }
        }
        var result = Array(repeating: (acknowledged: 0, attempted: 0), count: lanes.count)
        for await (number, acknowledged, attempted) in group { result[number] = (acknowledged, attempted) }
        return result
    }
}

/// The reference: each lane's pictures after 0, 1, … n of its steps, run
/// lane after lane on a fault-free disk; and the calls a concurrent
/// fault-free run makes (the range crash points are drawn from), whose end
/// state must match the reference's.
private struct Reference {
    var pictures: [[StorePicture]]
    /// Per lane and step, the pictures a crash part-way through that step may leave.
    var partialPictures: [[[StorePicture]]]
    var calls: Int
    var reopenCalls: Int
    /// Calls of the lanes run one after another (more than `calls` when a group commit shares them).
    var sequentialCalls: Int
}

private func reference(_ lanes: [Lane], checkpointThreshold: Int) async throws -> Reference {
    let disk = SimulatedDisk()
    disk.createDirectory(directory)
    let store = try await LocalStore.open(path: journalPath, options: storeOptions(disk, checkpointThreshold: checkpointThreshold))
    var pictures: [[StorePicture]] = []
    var partialPictures: [[[StorePicture]]] = []
    for lane in lanes {
        var lanePictures = [StorePicture(try await store.currentState(), kinds: lane.kinds, server: lane.watchesServer)]
        var lanePartials: [[StorePicture]] = []
        for step in lane.steps {
            let before = try await store.currentState()
            lanePartials.append((step.partialStates?(before) ?? []).map { StorePicture($0, kinds: lane.kinds, server: lane.watchesServer) })
            do { try await step.run(store) } catch {
                Issue.record("the reference run failed at \(step.label): \(error)")
                throw error
            }
            lanePictures.append(StorePicture(try await store.currentState(), kinds: lane.kinds, server: lane.watchesServer))
        }
        pictures.append(lanePictures)
        partialPictures.append(lanePartials)
    }
    await store.waitForUpkeep()
    try await store.close()
    let sequentialCalls = disk.callCount
    let before = disk.callCount
    let reopened = try await LocalStore.open(path: journalPath, options: storeOptions(disk, checkpointThreshold: checkpointThreshold))
    try await reopened.close()
    let reopenCalls = disk.callCount - before

    let concurrent = SimulatedDisk()
    concurrent.createDirectory(directory)
    let store2 = try await LocalStore.open(path: journalPath, options: storeOptions(concurrent, checkpointThreshold: checkpointThreshold))
    let done = await run(lanes, on: store2)
    let state = try await store2.currentState()
    await store2.waitForUpkeep()
    try await store2.close()
    for (number, lane) in lanes.enumerated() {
        #expect(done[number].acknowledged == lane.steps.count)
        #expect(StorePicture(state, kinds: lane.kinds, server: lane.watchesServer) == pictures[number].last!, "a concurrent fault-free run ends where the reference does")
    }
    return Reference(pictures: pictures, partialPictures: partialPictures, calls: concurrent.callCount, reopenCalls: reopenCalls, sequentialCalls: sequentialCalls)
}

/// Mixes seeds and crash points into one generator seed.
private func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
    var generator = SeededGenerator(seed: a &* 0x9E37_79B9_7F4A_7C15 ^ b)
    return generator.next()
}

/// A crash mode for one crash point: mostly a random power cut, sometimes a
/// process crash (the page cache survives) or a cut that loses everything unsynced.
private func crashMode(_ random: inout SeededGenerator) -> SimulatedDisk.CrashMode {
    switch Int.random(in: 0..<10, using: &random) {
    case 0: return .processCrash
    case 1: return .loseUnsynced
    default: return .powerLoss(using: &random)
    }
}

private func modeName(_ mode: SimulatedDisk.CrashMode) -> String {
    switch mode {
    case .processCrash: return "process"
    case .loseUnsynced: return "lose-unsynced"
    case .sectors: return "sectors"
    case .random: return "power-loss"
    }
}

/// `POWER_LOSS_SEED` and `POWER_LOSS_POINT` narrow a run to the seed and
/// crash point a failure names; `POWER_LOSS_SCALE` multiplies the seeds (a
/// longer soak).
private enum Reproduce {
    static func value(_ name: String) -> Int? { ProcessInfo.processInfo.environment[name].flatMap { Int($0) } }
    static var seed: UInt64? { value("POWER_LOSS_SEED").map { UInt64($0) } }
    static var point: Int? { value("POWER_LOSS_POINT") }
    static var scale: Int { max(1, value("POWER_LOSS_SCALE") ?? 1) }
    static var narrowed: Bool { seed != nil || point != nil }

    static func seeds(_ count: Int) -> [UInt64] {
        if let seed { return [seed] }
        return Array(0..<UInt64(count * scale))
    }
}

/// Runs `workload(seed)` for each of `seedCount` seeds and crashes it at
/// every call it makes (one crash in four is followed by a second one
/// during the recovery), checking after each reopen that every
/// acknowledged edit is there and the state is a prefix state. Returns the tally.
private func crashTest(name: String, test: String, seedCount: Int, checkpointThreshold: Int,
                       workload: (UInt64) -> [Lane]) async throws -> Tally {
    var tally = Tally()
    for seed in Reproduce.seeds(seedCount) {
        let lanes = workload(seed)
        let expected = try await reference(lanes, checkpointThreshold: checkpointThreshold)
        tally.workloads += 1
        tally.steps += lanes.reduce(0) { $0 + $1.steps.count }
        tally.calls += expected.calls
        tally.sequentialCalls += expected.sequentialCalls
        for point in 0..<expected.calls where Reproduce.point.map({ $0 == point }) ?? true {
            tally.planned += 1
            var crashRandom = SeededGenerator(seed: mix(seed, UInt64(point)))
            let mode = crashMode(&crashRandom)
            let recoveryCrash: (point: Int, mode: SimulatedDisk.CrashMode)? = Int.random(in: 0..<4, using: &crashRandom) == 0
                ? (Int.random(in: 0..<(expected.reopenCalls + 12), using: &crashRandom), crashMode(&crashRandom)) : nil
            var context = "\(name): seed \(seed), crash point \(point) of \(expected.calls) calls, \(mode)"
            if let recoveryCrash { context += ", then crash point \(recoveryCrash.point) of the reopen, \(recoveryCrash.mode)" }

            let disk = SimulatedDisk()
            disk.createDirectory(directory)
            var options: LocalStore.Options { storeOptions(disk, checkpointThreshold: checkpointThreshold) }
            disk.freeze(afterCalls: point)
            var done = Array(repeating: (acknowledged: 0, attempted: 0), count: lanes.count)
            if let store = try? await LocalStore.open(path: journalPath, options: options) {
                done = await run(lanes, on: store)
                // Lets a checkpoint started after the last step finish (or
                // fail) before the power goes, also one written beside the journal.
                await store.waitForUpkeep()
                try? await store.close()
            }
            if lanes.count == 1 && checkpointThreshold == 0 {
                // One caller makes the same calls as the reference, so the
                // freeze point is always reached. (An automatic checkpoint is
                // written beside the journal on a thread of its own: where
                // its calls fall among the edits', and so whether the
                // journal's preallocation steps fall in the old file or the
                // new one, varies from run to run.)
                #expect(disk.isFrozen, "\(context): the freeze point was never reached")
            }
            // Where a checkpoint was when the machine stopped.
            var phase: String?
            if disk.unsyncedRenames(in: directory).contains(where: { $0.from == "store.journal.checkpoint" }) {
                phase = "renamed"
            } else if disk.files(in: directory).contains("store.journal.checkpoint") {
                phase = disk.unsyncedBytes(of: checkpointTemporary) > 0 ? "writing" : "written"
            }
            let report = disk.crash(mode)
            if let phase {
                tally.checkpointsCrashedInside += 1
                tally.checkpointPhases[phase, default: 0] += 1
            }
            tally.renamesUndone += report.renamesUndone
            tally.filesTorn += report.filesTorn
            tally.modes[modeName(mode), default: 0] += 1

            if let recoveryCrash {
                disk.freeze(afterCalls: recoveryCrash.point)
                if let store = try? await LocalStore.open(path: journalPath, options: options) { try? await store.close() }
                let second = disk.crash(recoveryCrash.mode)
                tally.renamesUndone += second.renamesUndone
                tally.filesTorn += second.filesTorn
                tally.recoveriesCrashed += 1
            }

            let store: LocalStore
            do {
                store = try await LocalStore.open(path: journalPath, options: options)
            } catch {
                Issue.record("\(context): the store does not reopen: \(error)")
                continue
            }
            guard case .ready = await store.status else {
                Issue.record("\(context): the reopened store is \(await store.status)")
                continue
            }
            let state = try await store.currentState()
            // The recovered journal takes appends again, and they survive the next power cut.
            do {
                try await store.create("marker", id: "after-recovery", fields: ["point": .int(Int64(point))])
                try await store.close()
                disk.crash(.loseUnsynced)
                let again = try await LocalStore.open(path: journalPath, options: options)
                let stateAgain = try await again.currentState()
                try await again.close()
                #expect(stateAgain.visibleFields(of: RecordKey(kind: "marker", id: "after-recovery")) == ["point": .int(Int64(point))],
                        "\(context): an edit made after recovery is lost")
                #expect(StorePicture(stateAgain, kinds: Set(lanes.flatMap(\.kinds))) == StorePicture(state, kinds: Set(lanes.flatMap(\.kinds))),
                        "\(context): an edit made after recovery changes what was recovered")
            } catch {
                Issue.record("\(context): the recovered store refuses an edit or a reopen: \(error)")
            }
            tally.crashPoints += 1
            for (number, lane) in lanes.enumerated() {
                let (acknowledged, attempted) = done[number]
                tally.acknowledgedChecked += acknowledged
                let picture = StorePicture(state, kinds: lane.kinds, server: lane.watchesServer)
                let pictures = expected.pictures[number]
                // Some prefix n with acknowledged <= n <= attempted.
                // Or a state part-way through the one step attempted and not acknowledged.
                let partWay = acknowledged < attempted && expected.partialPictures[number][acknowledged].contains(picture)
                guard let prefix = (acknowledged...attempted).first(where: { pictures[$0] == picture }) ?? (partWay ? acknowledged : nil) else {
                    let laneText = lanes.count > 1 ? " lane \(number)" : ""
                    let other = pictures.indices.filter { pictures[$0] == picture }
                    let steps = lane.steps.prefix(attempted).enumerated().map { "\($0.offset): \($0.element.label)" }.joined(separator: ", ")
                    Issue.record("""
                        \(context)\(laneText): \(acknowledged) steps acknowledged, \(attempted) attempted \
                        (the last: \(attempted > 0 ? lane.steps[attempted - 1].label : "none")); \
                        the reopened state matches no prefix state from \(acknowledged) to \(attempted).
                        found:    \(picture)
                        expected: \(pictures[acknowledged])
                        the state after \(other.isEmpty ? "no prefix at all" : "prefix \(other)"); steps: \(steps)
                        crash: \(report)
                        reproduce: POWER_LOSS_SEED=\(seed) POWER_LOSS_POINT=\(point) swift test --filter PowerLossTests/\(test)
                        """)
                    continue
                }
                if prefix > acknowledged { tally.prefixesBeyondAcknowledged += 1 }
            }
        }
    }
    return tally
}

// MARK: Tests

@Suite("Power loss: every acknowledged edit survives, the state is always a prefix")
struct PowerLossTests {
    @Test("Single durable appends: creates, updates and deletes one at a time survive every crash point")
    func singleAppends() async throws {
        let tally = try await crashTest(name: "appends", test: "singleAppends", seedCount: 24, checkpointThreshold: 0) { seed in
            var random = SeededGenerator(seed: seed)
            let steps = (0..<20).map { index in editStep(kind: "pin", index: index, using: &random) }
            return [Lane(kinds: ["pin"], steps: steps)]
        }
        print(tally.line("appends"))
        #expect(tally.crashPoints == tally.planned && (Reproduce.narrowed || tally.planned > 1_000), "every crash point reopened")
        if !Reproduce.narrowed {
            #expect(tally.filesTorn > 0 && tally.prefixesBeyondAcknowledged > 0, "the crashes tear writes and keep unacknowledged ones")
        }
    }

    @Test("Group commit: concurrent editors sharing writes and fdatasyncs lose no acknowledged edit at any crash point")
    func groupCommit() async throws {
        let tally = try await crashTest(name: "group-commit", test: "groupCommit", seedCount: 22, checkpointThreshold: 0) { seed in
            var random = SeededGenerator(seed: mix(seed, 1))
            return (0..<4).map { editor in
                let kind = "e\(editor)"
                return Lane(kinds: [kind], steps: (0..<8).map { index in editStep(kind: kind, index: index, using: &random) })
            }
        }
        print(tally.line("group-commit") + "; \(tally.calls) calls run concurrently, \(tally.sequentialCalls) one caller at a time")
        #expect(tally.calls < tally.sequentialCalls, "concurrent editors share writes and fdatasyncs")
        #expect(tally.crashPoints == tally.planned && (Reproduce.narrowed || tally.planned > 1_000), "every crash point reopened")
    }

    @Test("Compaction: create, update and delete sequences the compactor collapses reopen as the same collapsed queue")
    func compaction() async throws {
        let tally = try await crashTest(name: "compaction", test: "compaction", seedCount: 24, checkpointThreshold: 0) { seed in
            var random = SeededGenerator(seed: mix(seed, 2))
            var steps: [Step] = []
            for index in 0..<24 {
                if Int.random(in: 0..<8, using: &random) == 0 {
                    steps.append(sendStep(limit: 1, index: index))
                } else {
                    steps.append(editStep(kind: "pin", index: index, ids: ["a", "b", "c"], using: &random))
                }
            }
            return [Lane(kinds: ["pin"], steps: steps)]
        }
        print(tally.line("compaction"))
        #expect(tally.crashPoints == tally.planned && (Reproduce.narrowed || tally.planned > 1_000), "every crash point reopened")
    }

    @Test("Checkpoints: a crash while the new file is written, before and after its fsync, before and after the rename and its directory sync, keeps the old journal or the new one")
    func checkpoints() async throws {
        let tally = try await crashTest(name: "checkpoints", test: "checkpoints", seedCount: 24, checkpointThreshold: 2) { seed in
            var random = SeededGenerator(seed: mix(seed, 3))
            var steps: [Step] = []
            for index in 0..<20 {
                switch Int.random(in: 0..<10, using: &random) {
                case 0: steps.append(checkpointStep(index: index))
                case 1: steps.append(pullStep(kind: "pin", index: index, using: &random))
                case 2: steps.append(sendStep(limit: 2, index: index))
                case 3: steps.append(replyStep(index: index, using: &random))
                default: steps.append(editStep(kind: "pin", index: index, using: &random))
                }
            }
            return [Lane(kinds: ["pin"], steps: steps)]
        }
        print(tally.line("checkpoints"))
        #expect(tally.crashPoints == tally.planned && (Reproduce.narrowed || tally.planned > 1_000), "every crash point reopened")
        if !Reproduce.narrowed {
            for phase in ["writing", "written", "renamed"] {
                #expect(tally.checkpointPhases[phase, default: 0] > 0, "crashes hit checkpoints while \(phase)")
            }
            #expect(tally.renamesUndone > 0, "some crashes undo a checkpoint's rename")
        }
    }

    @Test("Sync outcomes: sent marks, acknowledgements, conflicts, failures, quarantines and pulls recorded by the store survive every crash point")
    func syncOutcomes() async throws {
        let tally = try await crashTest(name: "sync-outcomes", test: "syncOutcomes", seedCount: 24, checkpointThreshold: 8) { seed in
            var random = SeededGenerator(seed: mix(seed, 4))
            var steps: [Step] = []
            let kinds = ["pin", "note", "tag"]
            for index in 0..<28 {
                let kind = kinds[Int.random(in: 0..<kinds.count, using: &random)]
                switch Int.random(in: 0..<20, using: &random) {
                case 0..<7: steps.append(editStep(kind: kind, index: index, using: &random))
                case 7..<10: steps.append(sendStep(limit: Int.random(in: 1...3, using: &random), index: index))
                case 10..<15: steps.append(replyStep(index: index, using: &random))
                case 15, 16: steps.append(pullStep(kind: kind, index: index, using: &random))
                case 17, 18: steps.append(attendStep(index: index, using: &random))
                default: steps.append(withdrawStep(index: index))
                }
            }
            return [Lane(kinds: Set(kinds), steps: steps)]
        }
        print(tally.line("sync-outcomes"))
        #expect(tally.crashPoints == tally.planned && (Reproduce.narrowed || tally.planned > 1_000), "every crash point reopened")
    }
}

// MARK: The journal writer alone

/// The payload of record `index` of lane `lane`: its identity in the first
/// two bytes, then filler (sometimes long, so a torn write can cut inside).
private func writerPayload(lane: Int, index: Int, seed: UInt64) -> [UInt8] {
    var random = SeededGenerator(seed: mix(seed, UInt64(lane * 1_000 + index)))
    let length = Int.random(in: 0..<6, using: &random) == 0 ? Int.random(in: 200...900, using: &random) : Int.random(in: 0...40, using: &random)
    return [UInt8(lane), UInt8(index)] + (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
}

/// Appends `count` records per lane in `mode` (lanes concurrently; in bulk
/// mode a `sync()` after every fourth record) and returns per lane the
/// records acknowledged durable and the records attempted.
private func writerWorkload(_ writer: JournalWriter, mode: JournalWriter.Mode, lanes: Int, count: Int, seed: UInt64) async -> [(acknowledged: Int, attempted: Int)] {
    await withTaskGroup(of: (Int, Int, Int).self) { group in
        for lane in 0..<lanes {
            group.addTask {
                var durable = 0
                for index in 0..<count {
                    do {
                        try await writer.append(type: RecordType(rawValue: 1), payload: writerPayload(lane: lane, index: index, seed: seed))
                        if mode != .bulk {
                            durable = index + 1
                        } else if index % 4 == 3 || index == count - 1 {
                            try await writer.sync()
                            durable = index + 1
                        }
                    } catch {
                        return (lane, durable, index + 1)
                    }
                }
                return (lane, count, count)
            }
        }
        var result = Array(repeating: (acknowledged: 0, attempted: 0), count: lanes)
        for await (lane, acknowledged, attempted) in group { result[lane] = (acknowledged, attempted) }
        return result
    }
}

extension PowerLossTests {
    @Test("Journal writer: durable, group-commit and bulk appends keep every record acknowledged durable and only a gapless prefix of those appended, at every crash point")
    func writerAppends() async throws {
        let path = "/device/raw.journal"
        var crashPoints = 0
        var acknowledgedChecked = 0
        var tornFiles = 0
        var unacknowledgedKept = 0
        for mode in [JournalWriter.Mode.durable, .groupCommit, .bulk] {
            let lanes = mode == .groupCommit ? 3 : 1
            let count = mode == .groupCommit ? 8 : 16
            for seed in UInt64(0)..<8 {
                let counting = SimulatedDisk()
                counting.createDirectory(directory)
                let writer = try await JournalWriter.open(path: path, options: .init(mode: mode, system: counting, preallocationBytes: powerLossPreallocation))
                _ = await writerWorkload(writer, mode: mode, lanes: lanes, count: count, seed: seed)
                try await writer.close()
                for point in 0..<counting.callCount {
                    var random = SeededGenerator(seed: mix(seed, UInt64(point)))
                    let crash = crashMode(&random)
                    let context = "writer \(mode): seed \(seed), crash point \(point) of \(counting.callCount) calls, \(crash)"
                    let disk = SimulatedDisk()
                    disk.createDirectory(directory)
                    disk.freeze(afterCalls: point)
                    var done = Array(repeating: (acknowledged: 0, attempted: 0), count: lanes)
                    if let writer = try? await JournalWriter.open(path: path, options: .init(mode: mode, system: disk.process(), preallocationBytes: powerLossPreallocation)) {
                        done = await writerWorkload(writer, mode: mode, lanes: lanes, count: count, seed: seed)
                        try? await writer.close()
                    }
                    let report = disk.crash(crash)
                    tornFiles += report.filesTorn
                    let found = Mutex<[[UInt8]]>([])
                    do {
                        let reopened = try await JournalWriter.open(path: path, options: .init(system: disk.process(), visitRecord: { record in
                            found.withLock { $0.append(record.payload) }
                        }))
                        try await reopened.close()
                    } catch {
                        Issue.record("\(context): the journal does not reopen: \(error)")
                        continue
                    }
                    crashPoints += 1
                    let records = found.withLock { $0 }
                    for lane in 0..<lanes {
                        let (acknowledged, attempted) = done[lane]
                        acknowledgedChecked += acknowledged
                        let mine = records.filter { $0.first == UInt8(lane) }
                        let expected = (0..<mine.count).map { writerPayload(lane: lane, index: $0, seed: seed) }
                        #expect(mine == expected, "\(context): lane \(lane) holds a record out of order, altered or not appended")
                        #expect(mine.count >= acknowledged && mine.count <= attempted,
                                "\(context): lane \(lane) holds \(mine.count) records; \(acknowledged) were acknowledged, \(attempted) attempted")
                        if mine.count > acknowledged { unacknowledgedKept += 1 }
                    }
                }
            }
        }
        print("power-loss writer: \(crashPoints) crash points, \(acknowledgedChecked) acknowledged appends checked, \(tornFiles) torn files, "
              + "\(unacknowledgedKept) unacknowledged appends found durable")
        #expect(crashPoints > 500 && tornFiles > 0)
    }
}

// MARK: Known issue: a change journaled as several records

extension PowerLossTests {
    /// A store with one conflict on `pin/a` (the server changed the row
    /// while the device's update was in flight), all durable.
    private static func storeWithConflict(_ disk: SimulatedDisk) async throws -> LocalStore {
        let store = try await LocalStore.open(path: journalPath, options: storeOptions(disk, checkpointThreshold: 0))
        try await store.applyPulledPage(kind: "pin", rows: [ServerRow(kind: "pin", id: "a", fields: ["name": .string("Cafe")], updatedAt: 100)],
                                        cursor: PullCursor(updatedAt: 100, id: "a"))
        let update = try await store.update("pin", id: "a", changes: ["name": .string("Tapas bar"), "rating": .int(5)]).operation
        try await store.beginSending([update])
        try await store.recordOutcomes([(update, .conflicted(server: ServerRow(kind: "pin", id: "a", fields: ["name": .string("Bar")], updatedAt: 200)))])
        await store.finishSending([update])
        return store
    }

    @Test("Resolving a conflict with an edit is all or nothing: a power cut keeping any subset of its write's sectors leaves the conflict as it was or settled with its edit queued, never one without the other",
          arguments: [ConflictDecision.keep(["name": .string("Tapas bar"), "rating": .int(5)]), .delete])
    func resolvingAConflictWithAnEditIsAtomic(decision: ConflictDecision) async throws {
        // The two states allowed: before the call and after it.
        let referenceDisk = SimulatedDisk()
        referenceDisk.createDirectory(directory)
        let reference = try await Self.storeWithConflict(referenceDisk)
        let before = StorePicture(try await reference.currentState())
        let conflictID = try #require(try await reference.conflicts().first?.id)
        try await reference.resolveConflict(conflictID, keeping: decision)
        let after = StorePicture(try await reference.currentState())
        try await reference.close()
        #expect(before != after)

        // The write of the resolution, reached the page cache, its fdatasync
        // failed: every subset of its unsynced sectors, with either length.
        let disk = SimulatedDisk()
        disk.createDirectory(directory)
        let store = try await Self.storeWithConflict(disk)
        let id = try #require(try await store.conflicts().first?.id)
        disk.freeze(afterCalls: 1)   // the pwrite reaches the page cache; the fdatasync fails
        await #expect(throws: StoreError.self) { try await store.resolveConflict(id, keeping: decision) }
        try? await store.close()
        let states = disk.powerLossStates()
        #expect(states.files.map { $0.path } == [journalPath], "only the journal has unsynced bytes")
        var statesChecked = 0
        var torn: [String] = []
        for mode in states {
            let copy = disk.snapshot()
            copy.crash(mode)
            let picture: StorePicture
            do {
                let reopened = try await LocalStore.open(path: journalPath, options: storeOptions(copy, checkpointThreshold: 0))
                picture = StorePicture(try await reopened.currentState())
                try await reopened.close()
            } catch {
                torn.append("\(mode): does not reopen: \(error)")
                continue
            }
            statesChecked += 1
            if picture != before && picture != after { torn.append("\(mode): \(picture)") }
        }
        print("power-loss resolve-conflict \(decision == .delete ? "delete" : "keep"): \(states.count) crash states (\(states.files.first?.description ?? "nothing unsynced")), \(torn.count) leave a state that never existed")
        // One record (conflict-settled, 0x000E): any subset of its sectors keeps both or neither.
        #expect(torn.isEmpty, "\(torn.count) of \(states.count) crash states leave neither state or do not reopen; e.g. \(torn.first ?? "")")
        #expect(statesChecked == states.count && states.count >= 2)
    }
}

// MARK: A write transaction

extension PowerLossTests {
    /// A store holding server rows `pin/a` and `pin/b` and an unsent
    /// create of `pin/local`, all durable.
    private static func storeBeforeTransaction(_ disk: SimulatedDisk) async throws -> LocalStore {
        let store = try await LocalStore.open(path: journalPath, options: storeOptions(disk, checkpointThreshold: 0))
        try await store.applyPulledPage(kind: "pin", rows: [ServerRow(kind: "pin", id: "a", fields: ["name": .string("Cafe")], updatedAt: 100),
                                                           ServerRow(kind: "pin", id: "b", fields: ["name": .string("Bar")], updatedAt: 110)],
                                        cursor: PullCursor(updatedAt: 110, id: "b"))
        try await store.create("pin", id: "local", fields: ["name": .string("Kiosk")])
        return store
    }

    /// Five edits over three kinds, spread over several sectors: an update,
    /// a delete, creates, and an update of a record created in the same write.
    private static func transaction(_ tx: inout WriteTransaction) throws {
        let long = String(repeating: "a long note that takes room; ", count: 20)
        try tx.update("pin", id: "a", changes: ["name": .string("Cafe Kranz"), "note": .string(long)])
        try tx.delete("pin", id: "b")
        let trip = try tx.create("trip", id: "t1", fields: ["name": .string("Lisbon"), "note": .string(long)])
        try tx.create("stop", id: "s1", fields: ["trip": .string(trip.id), "note": .string(long)])
        try tx.update("trip", id: trip.id, changes: ["stops": .int(1)])
        try tx.update("pin", id: "local", changes: ["visited": .bool(true)])
    }

    /// What reopening a store found.
    private enum Reopened {
        case opened(StorePicture)
        case refused(String)
    }

    /// The picture of the store on `disk` after reopening, or why it did not reopen.
    private static func reopenedPicture(_ disk: SimulatedDisk) async -> Reopened {
        do {
            let reopened = try await LocalStore.open(path: journalPath, options: storeOptions(disk, checkpointThreshold: 0))
            let status = await reopened.status
            let picture = status == .ready ? StorePicture(try await reopened.currentState()) : nil
            try await reopened.close()
            return picture.map { .opened($0) } ?? .refused("\(status)")
        } catch {
            return .refused("\(error)")
        }
    }

    @Test("A write transaction is all or nothing at every crash point: every subset of its unsynced sectors with either length, and every offset the file can be cut at inside its record, reopen as the state before it or the state after it")
    func writeTransactionIsAtomic() async throws {
        // The two states allowed, and the transaction record's extent.
        let referenceDisk = SimulatedDisk()
        referenceDisk.createDirectory(directory)
        let reference = try await Self.storeBeforeTransaction(referenceDisk)
        let before = StorePicture(try await reference.currentState())
        let edits = try await reference.write(Self.transaction)
        #expect(edits.count == 6)
        let after = StorePicture(try await reference.currentState())
        #expect(before != after)
        let written = try #require(referenceDisk.contents(of: journalPath))
        let records = try JournalReader(path: journalPath, system: referenceDisk.process(), understands: StoreEvent.isUnderstood).readAll().records
        let record = try #require(records.last)
        #expect(record.type == .transaction)
        let start = Int(record.offset)
        let end = start + record.length
        #expect(record.length > 3 * SimulatedDisk.sectorSize, "the record spans several sectors")
        try await reference.close()

        var wrong: [String] = []
        // Every cut inside the record: a torn tail, cut back to the state before.
        var torn = 0
        // A power cut keeps whole sectors: the record's bytes up to a sector
        // boundary, then zeros (a cut inside a sector would leave a record's
        // first bytes followed by zeros, which no power cut leaves).
        let cuts = (start...end).filter { $0 == start || $0 == end || $0 % SimulatedDisk.sectorSize == 0 }
        for cut in cuts {
            let copy = referenceDisk.snapshot()
            // A 2.2 journal's size after a power cut is a multiple of 4 KiB:
            // the cut bytes are followed by the preallocated zeros.
            let kept = Array(written.prefix(cut))
            copy.setContents(of: journalPath, to: kept + [UInt8](repeating: 0, count: (kept.count / 4096 + 1) * 4096 - kept.count))
            switch await Self.reopenedPicture(copy) {
            case .opened(let picture):
                let expected = cut == end ? after : before
                if picture != expected { wrong.append("cut at \(cut): \(picture)") }
                if cut > start && cut < end { torn += 1 }
            case .refused(let reason): wrong.append("cut at \(cut): does not reopen: \(reason)")
            }
        }
        #expect(torn == cuts.count - 2 && torn > 0)

        // The write reached the page cache and its fdatasync failed: every
        // subset of its unsynced sectors, with either length.
        let disk = SimulatedDisk()
        disk.createDirectory(directory)
        let store = try await Self.storeBeforeTransaction(disk)
        disk.freeze(afterCalls: 1)
        await #expect(throws: StoreError.self) { try await store.write(Self.transaction) }
        try? await store.close()
        let states = disk.powerLossStates()
        #expect(states.files.map { $0.path } == [journalPath], "only the journal has unsynced bytes")
        var sawBefore = 0, sawAfter = 0
        for mode in states {
            let copy = disk.snapshot()
            copy.crash(mode)
            switch await Self.reopenedPicture(copy) {
            case .opened(let picture):
                if picture == before { sawBefore += 1 } else if picture == after { sawAfter += 1 } else { wrong.append("\(mode): \(picture)") }
            case .refused(let reason): wrong.append("\(mode): does not reopen: \(reason)")
            }
        }
        print("power-loss write transaction: \(end - start + 1) cuts inside its \(record.length)-byte record, \(states.count) crash states "
              + "(\(sawBefore) before, \(sawAfter) after), \(wrong.count) leave a state that never existed")
        #expect(wrong.isEmpty, "\(wrong.count) crash states leave neither state or do not reopen; e.g. \(wrong.first ?? "")")
        #expect(sawBefore > 0 && sawAfter > 0)
    }

    @Test("A flipped bit anywhere in a durable transaction record is reported: the store opens it as unreadable and replay refuses it, never applying part of the write")
    func flippedBitInTransactionIsReported() async throws {
        let disk = SimulatedDisk()
        disk.createDirectory(directory)
        let store = try await Self.storeBeforeTransaction(disk)
        try await store.write(Self.transaction)
        try await store.close()
        let records = try JournalReader(path: journalPath, system: disk.process(), understands: StoreEvent.isUnderstood).readAll().records
        let record = try #require(records.first { $0.type == .transaction })
        var wrong: [String] = []
        for byte in Int(record.offset)..<(Int(record.offset) + record.length) {
            let copy = disk.snapshot()
            copy.damageDurable(path: journalPath, .flipBit(byte: byte, bit: byte % 8))
            switch await Self.reopenedPicture(copy) {
            case .opened(let picture): wrong.append("bit \(byte % 8) of byte \(byte): opened as \(picture)")
            case .refused(let reason): if !reason.contains("unreadable") { wrong.append("bit \(byte % 8) of byte \(byte): \(reason)") }
            }
            if (try? Replayer.replay(path: journalPath, system: copy.process())) != nil { wrong.append("byte \(byte): replayed") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) flipped bits not reported; e.g. \(wrong.first ?? "")")
    }
}

// MARK: Every crash state of small workloads

// The tests above draw one random power cut per crash point. These try every
// state a power cut can leave at a crash point (every subset of the unsynced
// sectors, both lengths, every prefix of unsynced directory changes) when
// there are at most `everyStateLimit` of them, and a random sample of
// `sampledStates` otherwise. For each state the journal must open as clean or
// with a torn tail (never corrupt), hold every acknowledged record, and hold
// exactly the records of some prefix of what was written.

/// Crash states tried one by one at a crash point when there are at most this many.
private let everyStateLimit = 1_024
/// Crash states drawn at a crash point that has more.
private let sampledStates = 300

/// The states to try on `disk` as it stands, and whether they are all of them.
private func crashStates(of disk: SimulatedDisk, seed: UInt64) -> (modes: [SimulatedDisk.CrashMode], every: Bool) {
    let states = disk.powerLossStates()
    if states.stateCount <= everyStateLimit { return (Array(states), true) }
    var random = SeededGenerator(seed: seed)
    return ((0..<sampledStates).map { _ in states.randomState(using: &random) }, false)
}

/// Counts of one exhaustive test, and the first failing states in full.
private struct StateTally {
    var workloads = 0
    var crashPoints = 0
    var pointsFullyEnumerated = 0
    var pointsSampled = 0
    var states = 0
    var largestPoint = 0
    var acknowledgedChecked = 0
    var statuses: [String: Int] = [:]
    var failingStates = 0
    var examples: [String] = []

    mutating func point(_ modes: Int, every: Bool) {
        crashPoints += 1
        if every { pointsFullyEnumerated += 1 } else { pointsSampled += 1 }
        states += modes
        largestPoint = max(largestPoint, modes)
    }

    mutating func fail(_ text: String) {
        failingStates += 1
        if examples.count < 5 { examples.append(text) }
    }

    func line(_ name: String) -> String {
        let statusText = statuses.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "power-loss states \(name): \(workloads) workloads, \(crashPoints) crash points (\(pointsFullyEnumerated) with every state tried, "
            + "\(pointsSampled) sampled), \(states) crash states checked (at most \(largestPoint) at one point), "
            + "\(acknowledgedChecked) acknowledged records or edits checked, opened [\(statusText)], \(failingStates) failing states"
    }

    /// Records the failures as issues: each example in full, then the count.
    func report(_ name: String) {
        for example in examples { Issue.record(Comment(rawValue: example)) }
        if failingStates > 0 { Issue.record("\(name): \(failingStates) of \(states) crash states fail" as Comment) }
    }
}

/// A journal-writer workload: lanes appending concurrently in one mode.
private struct WriterWorkload: Sendable, CustomStringConvertible {
    var mode: JournalWriter.Mode
    var lanes: Int
    var records: Int
    /// Large records (four to eight thousand bytes): more sectors per write than can be tried one subset at a time.
    var large = false

    var description: String {
        "\(mode), \(lanes) lane\(lanes == 1 ? "" : "s") x \(records)\(large ? " large" : "") records"
    }

    func payload(lane: Int, index: Int, seed: UInt64) -> [UInt8] {
        guard large else { return writerPayload(lane: lane, index: index, seed: seed) }
        var random = SeededGenerator(seed: mix(seed, UInt64(lane * 1_000 + index) | 1 << 40))
        let length = Int.random(in: 4_000...8_000, using: &random)
        return [UInt8(lane), UInt8(index)] + (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index &+ lane) | 1 }
    }
}

private let statesJournalPath = "/device/states.journal"

/// Per lane, the records known durable so far, and the lanes waiting in an
/// append or a sync (shared with the lanes' tasks).
private final class Acknowledged: Sendable {
    private let counts: Mutex<(durable: [Int], waiting: Int, running: Int)>
    init(lanes: Int) { counts = Mutex((Array(repeating: 0, count: lanes), 0, lanes)) }
    func set(_ lane: Int, _ count: Int) { counts.withLock { $0.durable[lane] = count } }
    var now: [Int] { counts.withLock { $0.durable } }
    func waiting(_ change: Int) { counts.withLock { $0.waiting += change } }
    func finished() { counts.withLock { $0.running -= 1 } }
    /// Whether every lane still running waits on the writer.
    var allWaiting: Bool { counts.withLock { $0.waiting >= $0.running } }
}

/// Runs `workload` on `writer` (in bulk mode a `sync()` after every fourth
/// record of a lane and after its last); `acknowledged` counts, per lane, the
/// records known durable so far. Returns per lane the records acknowledged and attempted.
private func runWriterWorkload(_ workload: WriterWorkload, on writer: JournalWriter, seed: UInt64,
                               acknowledged: Acknowledged) async -> [(acknowledged: Int, attempted: Int)] {
    await withTaskGroup(of: (Int, Int, Int).self) { group in
        for lane in 0..<workload.lanes {
            group.addTask {
                var durable = 0
                defer { acknowledged.finished() }
                for index in 0..<workload.records {
                    acknowledged.waiting(1)
                    defer { acknowledged.waiting(-1) }
                    do {
                        try await writer.append(type: RecordType(rawValue: 1), payload: workload.payload(lane: lane, index: index, seed: seed))
                        if workload.mode != .bulk {
                            durable = index + 1
                        } else if index % 4 == 3 || index == workload.records - 1 {
                            try await writer.sync()
                            durable = index + 1
                        }
                        acknowledged.set(lane, durable)
                    } catch {
                        return (lane, durable, index + 1)
                    }
                }
                return (lane, durable, workload.records)
            }
        }
        var result = Array(repeating: (acknowledged: 0, attempted: 0), count: workload.lanes)
        for await (lane, durable, attempted) in group { result[lane] = (durable, attempted) }
        return result
    }
}

/// Tries the crash states of `disk` as it stands (a workload stopped on it)
/// and checks each reopened journal against what was written and acknowledged.
private func checkWriterStates(_ disk: SimulatedDisk, workload: WriterWorkload, seed: UInt64, acknowledged: [Int], attempted: [Int],
                               context: String, tally: inout StateTally) async {
    // The disk as it stands now: in group commit the writer goes on writing
    // the next batches behind a held sync, so every state is cut from this
    // one picture, not from the live disk.
    let disk = disk.snapshot()
    // What the file holds before the power goes: the records any state may keep a prefix of.
    let whole = disk.snapshot()
    whole.crash(.processCrash)
    let written = ((try? JournalReader(path: statesJournalPath, system: whole).readAll())?.records ?? []).map(\.payload)
    let (modes, every) = crashStates(of: disk, seed: mix(seed, UInt64(tally.states)))
    tally.point(modes.count, every: every)
    for mode in modes {
        let copy = disk.snapshot()
        copy.crash(mode)
        let found = Mutex<[[UInt8]]>([])
        let status: JournalStatus
        do {
            let reopened = try await JournalWriter.open(path: statesJournalPath, options: .init(system: copy.process(), visitRecord: { record in
                found.withLock { $0.append(record.payload) }
            }))
            status = reopened.recovery.statusFound
            try await reopened.close()
        } catch {
            tally.fail("\(context), \(mode): the journal does not reopen: \(error)")
            continue
        }
        tally.statuses[status.name, default: 0] += 1
        let records = found.withLock { $0 }
        var problems: [String] = []
        if case .corrupt = status { problems.append("found \(status)") }
        if records != Array(written.prefix(records.count)) {
            problems.append("its \(records.count) records are not the first \(records.count) of the \(written.count) written")
        }
        for lane in 0..<workload.lanes {
            let mine = records.filter { $0.first == UInt8(lane) }.count
            if mine < acknowledged[lane] || mine > attempted[lane] {
                problems.append("lane \(lane) holds \(mine) records; \(acknowledged[lane]) acknowledged, \(attempted[lane]) attempted")
            }
        }
        tally.acknowledgedChecked += acknowledged.reduce(0, +)
        if !problems.isEmpty { tally.fail("\(context), \(mode): " + problems.joined(separator: "; ")) }
    }
}

/// Stops `workload` at each of its `fdatasync`s in turn (held by a
/// ``SyncHoldingSystemCalls``: the batch is written, not yet durable) and
/// tries the crash states there.
private func writerStatesAtHeldSyncs(_ workload: WriterWorkload, seed: UInt64, tally: inout StateTally) async throws {
    let disk = SimulatedDisk()
    disk.createDirectory(directory)
    let held = SyncHoldingSystemCalls(disk.process())
    let writer = try await JournalWriter.open(path: statesJournalPath,
                                              options: .init(mode: workload.mode, system: held, preallocationBytes: powerLossPreallocation))
    let acknowledged = Acknowledged(lanes: workload.lanes)
    held.holdNextSync()
    let work = Task {
        let done = await runWriterWorkload(workload, on: writer, seed: seed, acknowledged: acknowledged)
        held.finishWaiting()
        return done
    }
    var sync = 0
    while await held.nextHeldSync() {
        sync += 1
        // Every append that returned was made durable by an earlier sync; nothing is synced while this one is held.
        let known = acknowledged.now
        let attempted = Array(repeating: workload.records, count: workload.lanes)
        await checkWriterStates(disk, workload: workload, seed: mix(seed, UInt64(sync)), acknowledged: known, attempted: attempted,
                                context: "\(workload), seed \(seed), while sync \(sync) is held", tally: &tally)
        if workload.mode == .groupCommit {
            // Lets the other lanes queue their appends behind the held sync, so the next batch holds several records.
            for _ in 0..<200 where !acknowledged.allWaiting { try await Task.sleep(for: .milliseconds(1)) }
            try await Task.sleep(for: .milliseconds(2))
        }
        held.holdNextSync()
        held.release()
    }
    held.release()   // the hold armed after the last sync must not block the close
    let done = await work.value
    #expect(done.allSatisfy { $0.acknowledged == workload.records }, "\(workload), seed \(seed): a fault-free run acknowledges every record")
    try await writer.close()
    tally.workloads += 1
}

/// Crashes `workload` after each number of system calls it makes and tries the crash states there.
private func writerStatesAtEveryCall(_ workload: WriterWorkload, seed: UInt64, tally: inout StateTally) async throws {
    let counting = SimulatedDisk()
    counting.createDirectory(directory)
    let options = { (system: any SystemCalls) in JournalWriter.Options(mode: workload.mode, system: system, preallocationBytes: powerLossPreallocation) }
    let writer = try await JournalWriter.open(path: statesJournalPath, options: options(counting))
    _ = await runWriterWorkload(workload, on: writer, seed: seed, acknowledged: Acknowledged(lanes: workload.lanes))
    try await writer.close()
    for point in 0..<counting.callCount {
        let disk = SimulatedDisk()
        disk.createDirectory(directory)
        disk.freeze(afterCalls: point)
        var done = Array(repeating: (acknowledged: 0, attempted: 0), count: workload.lanes)
        if let writer = try? await JournalWriter.open(path: statesJournalPath, options: options(disk.process())) {
            done = await runWriterWorkload(workload, on: writer, seed: seed, acknowledged: Acknowledged(lanes: workload.lanes))
            try? await writer.close()
        }
        await checkWriterStates(disk, workload: workload, seed: mix(seed, UInt64(point)), acknowledged: done.map(\.acknowledged),
                                attempted: done.map(\.attempted), context: "\(workload), seed \(seed), after \(point) of \(counting.callCount) calls",
                                tally: &tally)
    }
    tally.workloads += 1
}

/// The small writer workloads whose every crash state is tried, per mode.
private func smallWriterWorkload(_ mode: JournalWriter.Mode) -> WriterWorkload {
    switch mode {
    case .durable: return WriterWorkload(mode: .durable, lanes: 2, records: 5)
    case .groupCommit: return WriterWorkload(mode: .groupCommit, lanes: 3, records: 4)
    case .bulk: return WriterWorkload(mode: .bulk, lanes: 1, records: 10)
    }
}

extension PowerLossTests {
    @Test("Journal writer, every crash state: crashed after any number of system calls, every subset of the unsynced sectors with either length opens clean or torn, with every acknowledged record and a prefix of those written",
          arguments: [JournalWriter.Mode.durable, .groupCommit, .bulk])
    func writerEveryStateAtEveryCall(mode: JournalWriter.Mode) async throws {
        var tally = StateTally()
        let workload = smallWriterWorkload(mode)
        for seed in Reproduce.seeds(8) { try await writerStatesAtEveryCall(workload, seed: seed, tally: &tally) }
        print(tally.line("writer \(workload), at every call"))
        tally.report("writer \(workload), at every call")
        #expect(tally.pointsFullyEnumerated > 0 && tally.states > tally.crashPoints)
    }

    @Test("Journal writer, every crash state while a batch's fdatasync is held: small workloads try every state, large ones a sample, in each append mode",
          arguments: [JournalWriter.Mode.durable, .groupCommit, .bulk])
    func writerEveryStateAtHeldSyncs(mode: JournalWriter.Mode) async throws {
        var small = StateTally()
        var large = StateTally()
        var workload = smallWriterWorkload(mode)
        if mode == .groupCommit { workload.lanes = 4 }
        var big = workload
        big.large = true
        big.records = mode == .bulk ? 8 : 2
        for seed in Reproduce.seeds(4) { try await writerStatesAtHeldSyncs(workload, seed: seed, tally: &small) }
        for seed in Reproduce.seeds(1) { try await writerStatesAtHeldSyncs(big, seed: seed, tally: &large) }
        print(small.line("writer \(workload), at held syncs"))
        print(large.line("writer \(big), at held syncs"))
        small.report("writer \(workload), at held syncs")
        large.report("writer \(big), at held syncs")
        #expect(small.crashPoints > 0 && small.pointsSampled == 0, "small workloads try every state")
        #expect(large.pointsSampled > 0, "large workloads have more states than are tried one by one")
    }
}

// MARK: Every crash state of a store

/// Crashes the lanes after each number of system calls and tries the crash
/// states there: the store must open ready (its journal clean or torn, never
/// corrupt) and show the state after a prefix of each lane's steps that
/// contains every acknowledged one.
private func storeStatesTest(name: String, seedCount: Int, checkpointThreshold: Int, workload: (UInt64) -> [Lane]) async throws -> StateTally {
    var tally = StateTally()
    for seed in Reproduce.seeds(seedCount) {
        let lanes = workload(seed)
        let expected = try await reference(lanes, checkpointThreshold: checkpointThreshold)
        tally.workloads += 1
        for point in 0..<expected.calls where Reproduce.point.map({ $0 == point }) ?? true {
            let disk = SimulatedDisk()
            disk.createDirectory(directory)
            disk.freeze(afterCalls: point)
            var done = Array(repeating: (acknowledged: 0, attempted: 0), count: lanes.count)
            if let store = try? await LocalStore.open(path: journalPath, options: storeOptions(disk, checkpointThreshold: checkpointThreshold)) {
                done = await run(lanes, on: store)
                try? await store.close()
            }
            let (modes, every) = crashStates(of: disk, seed: mix(seed, UInt64(point) | 1 << 50))
            tally.point(modes.count, every: every)
            for mode in modes {
                let context = "\(name): seed \(seed), after \(point) of \(expected.calls) calls, \(mode)"
                let copy = disk.snapshot()
                copy.crash(mode)
                let store: LocalStore
                do {
                    store = try await LocalStore.open(path: journalPath, options: storeOptions(copy, checkpointThreshold: checkpointThreshold))
                } catch {
                    tally.fail("\(context): the store does not reopen: \(error)")
                    continue
                }
                guard case .ready = await store.status, let found = store.recovery?.statusFound else {
                    tally.fail("\(context): the reopened store is \(await store.status)")
                    continue
                }
                tally.statuses[found.name, default: 0] += 1
                let state = try await store.currentState()
                try await store.close()
                for (number, lane) in lanes.enumerated() {
                    let (acknowledged, attempted) = done[number]
                    tally.acknowledgedChecked += acknowledged
                    let picture = StorePicture(state, kinds: lane.kinds, server: lane.watchesServer)
                    if !(acknowledged...attempted).contains(where: { expected.pictures[number][$0] == picture }) {
                        tally.fail("\(context)\(lanes.count > 1 ? ", lane \(number)" : ""): \(acknowledged) steps acknowledged, \(attempted) attempted; "
                                   + "the state matches no prefix between them: \(picture)")
                    }
                }
            }
        }
    }
    return tally
}

/// Per lane, how many steps have returned so far (read while the lanes run).
private final class LaneProgress: Sendable {
    private let counts: Mutex<[Int]>
    init(lanes: Int) { counts = Mutex(Array(repeating: 0, count: lanes)) }
    var now: [Int] { counts.withLock { $0 } }
    func returned(lane: Int, steps: Int) { counts.withLock { $0[lane] = steps } }
}

/// Runs `lanes` on a store whose every `fdatasync` is held in turn. While a
/// sync is held, the editors not waiting for it have their next batches
/// written behind it (pipelined group commit): at each held sync every
/// crash state of the unsynced sectors is tried, and the reopened store must
/// show, per lane, a prefix that holds every step acknowledged before the
/// hold. Returns how many held syncs had a later batch written behind them.
private func storeStatesAtHeldSyncs(name: String, lanes: [Lane], seed: UInt64, expected: Reference, tally: inout StateTally) async throws -> Int {
    let disk = SimulatedDisk()
    disk.createDirectory(directory)
    let held = SyncHoldingSystemCalls(disk.process())
    var options = storeOptions(disk, checkpointThreshold: 0)
    options.system = held
    let store = try await LocalStore.open(path: journalPath, options: options)
    let progress = LaneProgress(lanes: lanes.count)
    held.holdNextSync()
    let work = Task {
        let done = await withTaskGroup(of: Bool.self) { group in
            for (number, lane) in lanes.enumerated() {
                group.addTask {
                    for (index, step) in lane.steps.enumerated() {
                        do { try await step.run(store) } catch { return false }
                        progress.returned(lane: number, steps: index + 1)
                    }
                    return true
                }
            }
            return await group.allSatisfy { $0 }
        }
        held.finishWaiting()
        return done
    }
    var sync = 0
    var pipelined = 0
    while await held.nextHeldSync() {
        sync += 1
        // Nothing is acknowledged while this sync is held: read before the disk is.
        let acknowledged = progress.now
        // Lets editors not waiting for the held sync have their next batch
        // written behind it (the store's thread is free unless it holds the sync itself).
        let before = disk.callCount
        for _ in 0..<20_000 where disk.callCount == before { await Task.yield() }
        if disk.callCount > before { pipelined += 1 }
        let (modes, every) = crashStates(of: disk, seed: mix(seed, UInt64(sync) | 1 << 40))
        tally.point(modes.count, every: every)
        for mode in modes {
            let context = "\(name): seed \(seed), while sync \(sync) is held, \(mode)"
            let copy = disk.snapshot()
            copy.crash(mode)
            let reopened: LocalStore
            do {
                reopened = try await LocalStore.open(path: journalPath, options: storeOptions(copy, checkpointThreshold: 0))
            } catch {
                tally.fail("\(context): the store does not reopen: \(error)")
                continue
            }
            guard case .ready = await reopened.status, let found = reopened.recovery?.statusFound else {
                tally.fail("\(context): the reopened store is \(await reopened.status)")
                continue
            }
            tally.statuses[found.name, default: 0] += 1
            let state = try await reopened.currentState()
            try await reopened.close()
            for (number, lane) in lanes.enumerated() {
                tally.acknowledgedChecked += acknowledged[number]
                let picture = StorePicture(state, kinds: lane.kinds, server: lane.watchesServer)
                if !(acknowledged[number]...lane.steps.count).contains(where: { expected.pictures[number][$0] == picture }) {
                    tally.fail("\(context), lane \(number): \(acknowledged[number]) steps acknowledged; the state matches no prefix from there: \(picture)")
                }
            }
        }
        held.holdNextSync()
        held.release()
    }
    held.release()   // the hold armed after the last sync must not block the close
    #expect(await work.value, "\(name), seed \(seed): a fault-free run acknowledges every edit")
    try await store.close()
    tally.workloads += 1
    return pipelined
}

extension PowerLossTests {
    @Test("Store, every crash state while a batch's fdatasync is held and the next batches are written behind it (pipelined group commit): every subset of the unsynced sectors reopens ready with every acknowledged edit and a prefix of each editor's edits")
    func storeEveryStateAtHeldSyncs() async throws {
        var tally = StateTally()
        var pipelined = 0
        for seed in Reproduce.seeds(6) {
            var random = SeededGenerator(seed: mix(seed, 13))
            let lanes = (0..<3).map { editor in
                Lane(kinds: ["e\(editor)"], steps: (0..<4).map { editStep(kind: "e\(editor)", index: $0, using: &random) })
            }
            let expected = try await reference(lanes, checkpointThreshold: 0)
            pipelined += try await storeStatesAtHeldSyncs(name: "store, 3 editors, held syncs", lanes: lanes, seed: seed,
                                                          expected: expected, tally: &tally)
        }
        print(tally.line("store, 3 concurrent editors x 4 edits, at held syncs") + "; \(pipelined) held syncs with a batch written behind them")
        tally.report("store, 3 editors, held syncs")
        #expect(tally.crashPoints > 0 && tally.pointsSampled == 0, "every state is tried at every held sync")
        #expect(pipelined > 0, "batches are written while an earlier batch's sync is held")
    }
}

extension PowerLossTests {
    @Test("Store, every crash state: small edit workloads, one editor and three concurrent ones (group commit), crashed after any number of system calls, reopen ready with every acknowledged edit in every state")
    func storeEveryState() async throws {
        let single = try await storeStatesTest(name: "store, 1 editor", seedCount: 6, checkpointThreshold: 0) { seed in
            var random = SeededGenerator(seed: mix(seed, 11))
            return [Lane(kinds: ["pin"], steps: (0..<6).map { editStep(kind: "pin", index: $0, using: &random) })]
        }
        let concurrent = try await storeStatesTest(name: "store, 3 editors", seedCount: 6, checkpointThreshold: 0) { seed in
            var random = SeededGenerator(seed: mix(seed, 12))
            return (0..<3).map { editor in
                Lane(kinds: ["e\(editor)"], steps: (0..<3).map { editStep(kind: "e\(editor)", index: $0, using: &random) })
            }
        }
        print(single.line("store, 1 editor x 6 edits"))
        print(concurrent.line("store, 3 concurrent editors x 3 edits"))
        single.report("store, 1 editor")
        concurrent.report("store, 3 editors")
        #expect(single.crashPoints > 0 && concurrent.crashPoints > 0)
    }
}

// MARK: What the device knows of its server

/// The identity steps use: `server-0`, `server-1`, …
private func identity(_ number: Int) -> ServerIdentity { ServerIdentity("server-\(number)")! }

/// What the device knows of its server moves on one step: an identity
/// learned, then a mismatch that stops sync, then a reconciliation that
/// adopts the next identity with a seen stamp. One journal write.
private func serverStep(index: Int) -> Step {
    Step(label: "server #\(index)") { store in
        let known = try await store.knownServer()
        switch (known.identity, known.mismatch) {
        case (nil, _):
            try await store.recordServer(.learned(identity(index)))
        case (let current?, nil):
            try await store.recordServer(.mismatched(.differentServer(expected: current, found: identity(index))))
        case (_?, _?):
            try await store.recordServer(.adopted(identity(index), seenStamp: stamp(index)))
        }
    }
}

/// A reconciliation's plan against a server that holds some of the
/// device's records (the same copy, an older one, another one, a
/// tombstone) and lacks the others. One journal write (or none).
private func reuploadStep<G: RandomNumberGenerator>(index: Int, using random: inout G) -> Step {
    let seed = UInt64.random(in: 0...UInt64.max, using: &random)
    let sameHistory = Bool.random(using: &random)
    return Step(label: "re-upload #\(index)") { store in
        let state = try await store.currentState()
        var choices = SeededGenerator(seed: seed)
        var rows: [RecordKey: ServerRow] = [:]
        for key in state.snapshot.keys.sorted(by: <) {
            let row = state.snapshot[key]!
            switch Int.random(in: 0..<5, using: &choices) {
            case 0: rows[key] = row
            case 1: rows[key] = ServerRow(kind: key.kind, id: key.id, fields: ["old": .int(1)], updatedAt: row.updatedAt - 1)
            case 2: rows[key] = ServerRow(kind: key.kind, id: key.id, fields: ["other": .int(2)], updatedAt: stamp(index))
            case 3: rows[key] = ServerRow(kind: key.kind, id: key.id, updatedAt: stamp(index), deletedAt: stamp(index))
            default: break
            }
        }
        rows[RecordKey(kind: "pin", id: "pin-restored-\(index)")] = ServerRow(kind: "pin", id: "pin-restored-\(index)",
                                                                              fields: ["n": .int(Int64(index))], updatedAt: 1)
        _ = try await store.queueReuploads(serverRows: rows, kinds: ["pin"], sameHistory: sameHistory)
    }
}

/// A reconciliation replaces the kind's snapshot with what the server has:
/// some of the device's rows and a new one, with a fresh cursor.
/// A full re-pull replacing the pin snapshot: a random part of the rows the
/// device holds and one new row. It is journaled as several records (rows,
/// ids forgotten, cursor), so a power cut may keep any prefix of them.
private func replaceStep<G: RandomNumberGenerator>(index: Int, using random: inout G) -> Step {
    let seed = UInt64.random(in: 0...UInt64.max, using: &random)
    @Sendable func replacement(of state: StoreState) -> (rows: [ServerRow], cursor: PullCursor) {
        var choices = SeededGenerator(seed: seed)
        var rows = state.snapshot.keys.sorted(by: <).filter { _ in Bool.random(using: &choices) }.map { state.snapshot[$0]! }
        rows.append(ServerRow(kind: "pin", id: "pin-new-\(index)", fields: ["n": .int(Int64(index))], updatedAt: stamp(index)))
        rows.sort { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) }
        let last = rows.last!
        return (rows, PullCursor(updatedAt: last.updatedAt, id: last.id))
    }
    return Step(label: "replace #\(index)", run: { store in
        let (rows, cursor) = replacement(of: try await store.currentState())
        try await store.replaceSnapshot(kind: "pin", rows: rows, cursor: cursor)
    }, partialStates: { before in
        let (rows, cursor) = replacement(of: before)
        let events = LocalStore.replacementEvents(kind: "pin", rows: rows, cursor: cursor, in: before)
        var state = before
        var states: [StoreState] = []
        for event in events.dropLast() {
            state.apply(event)
            states.append(state)
        }
        return states
    })
}

extension PowerLossTests {
    @Test("Server identity and reconciliation: an identity learned, a mismatch that stops sync, re-uploads queued ahead of queued edits, a replaced snapshot and an adopted identity survive every crash point, checkpoints included, as the state after a prefix of the steps")
    func serverIdentityAndReconciliation() async throws {
        let tally = try await crashTest(name: "server-identity", test: "serverIdentityAndReconciliation", seedCount: 16,
                                        checkpointThreshold: 6) { seed in
            var random = SeededGenerator(seed: mix(seed, 9))
            var steps: [Step] = []
            for index in 0..<22 {
                switch Int.random(in: 0..<16, using: &random) {
                case 0..<5: steps.append(editStep(kind: "pin", index: index, using: &random))
                case 5, 6: steps.append(sendStep(limit: 2, index: index))
                case 7, 8: steps.append(replyStep(index: index, using: &random))
                case 9: steps.append(pullStep(kind: "pin", index: index, using: &random))
                case 10, 11: steps.append(serverStep(index: index))
                case 12, 13: steps.append(reuploadStep(index: index, using: &random))
                case 14: steps.append(replaceStep(index: index, using: &random))
                default: steps.append(checkpointStep(index: index))
                }
            }
            return [Lane(kinds: ["pin"], steps: steps, watchesServer: true)]
        }
        print(tally.line("server-identity"))
        #expect(tally.crashPoints == tally.planned && (Reproduce.narrowed || tally.planned > 500), "every crash point reopened")
    }
}
