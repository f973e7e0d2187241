import Foundation
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

// Helpers of the conflict, outcome and resync tests. Everything is
// driven end to end: a LocalStore on a journal file, a SyncEngine, and the
// in-memory ReferenceServer as the other writer. Races are staged with
// FaultInjectingTransport holds, never with sleeps.

/// The pin every conflict test starts from, as the server first writes it.
let conflictBaseFields: [String: FieldValue] = [
    "name": .string("Cafe"),
    "tags": .stringSet(["food"]),
    "rating": .int(3),
]

/// A server holding pin p1 (owned by u1) and a device that has pulled it:
/// the device's snapshot holds p1 at `base.updatedAt`, and nothing is queued.
struct ConflictScene {
    let dir: TemporaryDirectory
    let server: ReferenceServer
    var device: Device
    let policies: [String: ConflictPolicy]
    /// p1 as the device pulled it: the base of its next edit.
    let base: ServerRow

    static func make(_ dir: TemporaryDirectory, policies: [String: ConflictPolicy] = [:],
                     fields: [String: FieldValue] = conflictBaseFields) async throws -> ConflictScene {
        let server = ReferenceServer()
        let base = await server.write(user: "u1", kind: "pin", id: "p1", fields: fields)
        let device = try await Device.open(dir.file("device.journal"), server: server, conflictPolicies: policies)
        let first = await device.sync()
        #expect(first == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await device.store.currentState().snapshot[RecordKey(kind: "pin", id: "p1")] == base)
        // Later server writes get larger stamps than the one the device holds.
        await server.tick(10)
        return ConflictScene(dir: dir, server: server, device: device, policies: policies, base: base)
    }

    var store: LocalStore { device.store }

    /// The visible fields of p1, or `nil` if the device shows no p1.
    func visible(_ id: String = "p1") async throws -> [String: FieldValue]? {
        try await store.record("pin", id: id)?.fields
    }

    /// The operation queued for p1 right after an edit (its id is the conflict's id).
    func queued(_ id: OperationID) async throws -> JournalOperation {
        try #require(try await store.outboxOperations().first { $0.id == id }).operation
    }

    /// Closes the store and reopens it from the same journal file (same
    /// policies; replay must not need them), checks that the state, the
    /// records, the conflicts and the outbox are exactly as before, and
    /// swaps in the reopened device.
    /// With `checkpointFirst`, the journal is rewritten as a checkpoint
    /// before closing, so the state is rebuilt from checkpoint records.
    mutating func reopenAndCompare(checkpointFirst: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        if checkpointFirst { try await store.checkpoint() }
        let before = try await store.currentState()
        let records = try await store.records("pin")
        let conflicts = try await store.conflicts()
        let outbox = try await store.outboxOperations()
        try await store.close()
        device = try await Device.open(device.path, server: server, conflictPolicies: policies)
        #expect(try await store.currentState() == before, "replay reaches the same state", sourceLocation: sourceLocation)
        #expect(try await store.records("pin") == records, "replay shows the same records", sourceLocation: sourceLocation)
        #expect(try await store.conflicts() == conflicts, "replay keeps the same conflicts", sourceLocation: sourceLocation)
        // In-memory "in flight" marks do not survive; the journaled queue does.
        #expect(try await store.outboxOperations() == outbox, "replay keeps the same outbox", sourceLocation: sourceLocation)
    }
}

/// Everything a change stream delivered until it finished (the store closed).
func drainChanges(_ stream: AsyncStream<StoreChange>) async -> [StoreChange] {
    var changes: [StoreChange] = []
    for await change in stream { changes.append(change) }
    return changes
}

/// The conflicts a change stream reported.
func conflictChanges(_ changes: [StoreChange]) -> [ConflictRecord] {
    changes.compactMap { if case .conflict(let conflict) = $0 { return conflict } else { return nil } }
}

/// A value set once from a `@Sendable` closure (a custom resolver, a task)
/// and read by the test.
final class SharedSlot<Value: Sendable>: Sendable {
    private let storage = Mutex<Value?>(nil)
    init() {}
    func set(_ value: Value) { storage.withLock { $0 = value } }
    var value: Value? { storage.withLock { $0 } }
}

/// Collects every value a `@Sendable` closure gives it.
final class SharedLog<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])
    init() {}
    func append(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
}

extension OperationOutcome {
    var asConflict: ConflictRecord? { if case .conflicted(let conflict) = self { return conflict } else { return nil } }
    var asAcknowledged: ServerRow? { if case .acknowledged(let row) = self { return row } else { return nil } }
    var asQuarantined: OutboxEntryStatus? { if case .quarantined(let entry) = self { return entry } else { return nil } }
}

/// Yields to other tasks a few times, and makes round trips to `store`, so a
/// task started just before has had its chance to run as far as it can.
/// (Not a sleep: it neither waits for time nor for an outcome.)
func letOtherTasksRun(_ store: LocalStore) async {
    for _ in 0..<20 {
        await Task.yield()
        _ = await store.status
    }
}

/// Waits until `faulty` holds a request, or `task` (a sync) finishes without
/// one. Returns whether a request is held. Never hangs when the sync makes no
/// further request: the test then fails instead.
func waitUntilHeldOrFinished(_ faulty: FaultInjectingTransport, _ task: Task<SyncOutcome, Never>) async -> Bool {
    let (signal, continuation) = AsyncStream<Bool>.makeStream()
    Task {
        await faulty.waitUntilHeld()
        continuation.yield(true)
    }
    Task {
        _ = await task.value
        continuation.yield(await faulty.isHolding)
    }
    var iterator = signal.makeAsyncIterator()
    return await iterator.next() ?? false
}

extension ConflictScene {
    /// Syncs with the first push (the stale edit, refused as a conflict) let
    /// through and the second (the operation the resolution requeued) held:
    /// `inspect` runs while the requeued operation is on its way, and the
    /// sync's outcome is returned once it has been released and finished.
    func syncInspectingRequeued(_ inspect: () async throws -> Void,
                                sourceLocation: SourceLocation = #_sourceLocation) async throws -> SyncOutcome {
        let device = self.device
        await device.faulty.inject(.hold, on: .push, times: 2)
        let task = Task { await device.sync() }
        await device.faulty.waitUntilHeld()
        await device.faulty.releaseHeld()
        let held = await waitUntilHeldOrFinished(device.faulty, task)
        try #require(held, "the resolution requeued an operation and the same sync pushed it", sourceLocation: sourceLocation)
        do {
            try await inspect()
        } catch {
            await device.faulty.releaseHeld()
            _ = await task.value
            throw error
        }
        await device.faulty.releaseHeld()
        return await task.value
    }
}
