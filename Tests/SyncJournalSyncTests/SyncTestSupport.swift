import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

// Shared helpers of the sync engine tests. Races are staged with
// FaultInjectingTransport.holdNextRequest / waitUntilHeld / releaseHeld,
// never with sleeps or polling.

/// Year 2100 in milliseconds: far ahead of the reference server's clock (late 2025).
let farFutureMilliseconds: Int64 = 4_102_444_800_000

/// The size of a file in bytes.
func fileSize(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.size] as? NSNumber)?.intValue ?? -1
}

/// A transport whose answers the test writes.
struct ScriptedTransport: SyncTransport {
    var onPush: @Sendable ([Mutation]) async throws(TransportError) -> [MutationResult]
    var onPull: @Sendable (PullRequest) async throws(TransportError) -> PullPage

    init(onPush: @escaping @Sendable ([Mutation]) async throws(TransportError) -> [MutationResult] = { _ throws(TransportError) in
             throw .permanent(reason: "no push expected")
         },
         onPull: @escaping @Sendable (PullRequest) async throws(TransportError) -> PullPage = { _ throws(TransportError) in
             PullPage(rows: [], nextCursors: [:], hasMore: false)
         }) {
        self.onPush = onPush
        self.onPull = onPull
    }

    /// Answers every mutation with `outcome(mutation)`.
    static func answering(_ outcome: @escaping @Sendable (Mutation) -> MutationOutcome) -> ScriptedTransport {
        ScriptedTransport(onPush: { mutations throws(TransportError) in
            mutations.map { MutationResult(operationID: $0.operationID, outcome: outcome($0)) }
        })
    }

    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] { try await onPush(mutations) }
    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage { try await onPull(request) }
}

/// One device: a store on a journal, a fault-injecting transport to the
/// reference server (with a recorder behind it that sees only what reached
/// the server), and an engine.
struct Device {
    let path: String
    let store: LocalStore
    let faulty: FaultInjectingTransport
    let recorder: RecordingTransport
    let engine: SyncEngine

    /// Opens a device. `syncClock` times the engine's backoffs and timers (a
    /// ``ManualClock`` in tests that control them); the jitter is seeded, so
    /// every run draws the same delays. With `followsSharedSpaces` its pulls
    /// cover the shared spaces `user` is a member of.
    static func open(_ path: String, server: ReferenceServer, user: String = "u1",
                     kinds: [String] = ["pin"], batchSize: Int = 100, pullLimit: Int = 500,
                     clock: any SyncClock = StillClock(milliseconds: farFutureMilliseconds),
                     syncClock: any SyncClock = ContinuousClock(),
                     retryPolicy: RetryPolicy = RetryPolicy(), jitterSeed: UInt64 = 42,
                     conflictPolicies: [String: ConflictPolicy] = [:],
                     maximumPermanentFailures: Int = 3, followsSharedSpaces: Bool = false,
                     attachmentChunkBytes: Int = 1 << 20) async throws -> Device {
        let store = try await LocalStore.open(path: path, options: .init(clock: clock, conflictPolicies: conflictPolicies,
                                                                         maximumPermanentFailures: maximumPermanentFailures))
        let recorder = RecordingTransport(server.transport(user: user))
        let faulty = FaultInjectingTransport(recorder)
        let engine = SyncEngine(store: store, transport: faulty,
                                options: .init(kinds: kinds, batchSize: batchSize, pullLimit: pullLimit,
                                               retryPolicy: retryPolicy, jitterSeed: jitterSeed,
                                               followsSharedSpaces: followsSharedSpaces, attachmentChunkBytes: attachmentChunkBytes),
                                clock: syncClock)
        return Device(path: path, store: store, faulty: faulty, recorder: recorder, engine: engine)
    }

    func sync() async -> SyncOutcome { await engine.sync() }
}

/// Opens a store with a fixed clock.
func openStore(_ path: String, clock: Int64 = farFutureMilliseconds) async throws -> LocalStore {
    try await LocalStore.open(path: path, options: .init(clock: StillClock(milliseconds: clock)))
}

/// A row as a server would send it.
func serverRow(_ id: String, at updatedAt: Int64, kind: String = "pin", _ fields: [String: FieldValue] = [:]) -> ServerRow {
    ServerRow(kind: kind, id: id, fields: fields, updatedAt: updatedAt)
}

/// The cursor right after `row`.
func cursor(after row: ServerRow) -> PullCursor { PullCursor(updatedAt: row.updatedAt, id: row.id) }

extension SyncOutcome {
    var isError: Bool { failure != nil }
    /// Why the sync failed, for a `.failed` outcome.
    var failure: SyncFailure? { if case .failed(let failure) = self { return failure } else { return nil } }
    /// A transient whole-request failure: `.retryLater`.
    var isRetryLater: Bool { if case .retryLater = self { return true } else { return false } }
    var retryReason: String? { if case .retryLater(let reason, _) = self { return reason } else { return nil } }
}

/// The resolution "server wins" records for `operation`: nothing requeued,
/// every field the edit changed lost (none for a delete).
func serverWinsResolution(for operation: JournalOperation, strategy: ConflictResolution.Strategy = .serverWins) -> ConflictResolution {
    ConflictResolution(strategy: strategy, replacement: nil,
                       lostFields: operation.kind == .delete ? [] : operation.fields.keys.sorted())
}

extension Duration {
    /// The duration in whole milliseconds (rounded down), as the engine counts.
    var wholeMilliseconds: Int64 {
        components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000
    }
}
