import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// What reached the server, recorded beneath the fault layer: a push whose
/// reply is lost is still here, with the result the server gave. The
/// simulator's invariants read it (which operations the server applied, and
/// whether one was applied twice).
public actor ServerLog {
    /// The server's answer to one operation, as it left the server.
    public struct Delivery: Sendable, Hashable {
        /// The device that sent it.
        public var device: String
        /// The operation.
        public var mutation: Mutation
        /// What the server answered.
        public var outcome: MutationOutcome
        /// Whether the server's count of applied mutations grew by this one.
        public var newlyApplied: Bool
    }

    private var applied: Set<OperationID> = []
    private var received: Set<OperationID> = []
    /// Operations applied before the last restore from a backup: the
    /// restored server may apply them once more (their effect was lost).
    private var appliedBeforeRestore: Set<OperationID> = []
    private var doubleApplied: [String] = []
    /// The stamp of the row each applied operation was first answered with.
    private var appliedStamps: [OperationID: Int64] = [:]
    private var createdAfter: [RecordKey: [(device: String, sequence: Int)]] = [:]
    private var lastCreate: [RecordKey: Int] = [:]
    private var lastDelete: [RecordKey: Int] = [:]
    /// Deliveries in arrival order.
    public private(set) var deliveries: [Delivery] = []
    /// Uploads the server took whole (their last chunk arrived, whether or not its reply did).
    public private(set) var uploadsCompleted = 0

    /// An empty log.
    public init() {}

    /// Whether the server applied operation `id` (at any time, whatever reached the device).
    public func wasApplied(_ id: OperationID) -> Bool { applied.contains(id) }

    /// Whether a request carrying operation `id` reached the server.
    public func wasReceived(_ id: OperationID) -> Bool { received.contains(id) }

    /// Descriptions of operations the server applied more than once (empty when all is well).
    public var doubleApplications: [String] { doubleApplied }

    /// Records one push: the mutations, the results, and how many the server
    /// counted as applied (`nil` where the server does not show its count:
    /// then an operation answered `applied` again with a row of another stamp
    /// is the sign of a second application).
    func record(device: String, mutations: [Mutation], results: [MutationResult], appliedDelta: Int?, sequence: Int) {
        for mutation in mutations { received.insert(mutation.operationID) }
        let byID = Dictionary(results.map { ($0.operationID, $0.outcome) }, uniquingKeysWith: { first, _ in first })
        var fresh = 0
        for mutation in mutations {
            guard let outcome = byID[mutation.operationID] else { continue }
            var newly = false
            if appliedDelta == nil, case .applied(let row) = outcome, let first = appliedStamps[mutation.operationID], first != row.updatedAt {
                doubleApplied.append("\(device)'s resend of \(mutation.op) \(mutation.kind) \(mutation.recordID) was applied again: "
                    + "stamp \(row.updatedAt), first answered with \(first)")
            }
            if case .applied(let row) = outcome, appliedStamps[mutation.operationID] == nil { appliedStamps[mutation.operationID] = row.updatedAt }
            if case .applied = outcome, applied.contains(mutation.operationID), appliedBeforeRestore.remove(mutation.operationID) != nil {
                // Applied again by the restored server, which lost the first
                // application: new to it. A create made again is a create in
                // the restored history, now (a deletion the restore lost, or
                // one another device re-uploaded before this resend arrived,
                // is behind it).
                fresh += 1
                if mutation.op == .create {
                    let key = mutation.key
                    createdAfter[key, default: []].append((device, sequence))
                    lastCreate[key] = sequence
                }
            }
            if case .applied = outcome, !applied.contains(mutation.operationID) {
                applied.insert(mutation.operationID)
                newly = true
                fresh += 1
                let key = mutation.key
                switch mutation.op {
                case .create:
                    createdAfter[key, default: []].append((device, sequence))
                    lastCreate[key] = sequence
                case .delete:
                    lastDelete[key] = sequence
                case .update:
                    break
                }
            }
            deliveries.append(Delivery(device: device, mutation: mutation, outcome: outcome, newlyApplied: newly))
        }
        if let appliedDelta, appliedDelta > fresh {
            doubleApplied.append("\(device)'s push of \(mutations.count) mutation(s) applied \(appliedDelta), "
                + "but only \(fresh) were new operations: " + mutations.map { "\($0.op) \($0.kind) \($0.recordID)" }.joined(separator: ", "))
        }
    }

    /// Another writer created (or replaced) a row, or deleted one, at `sequence`.
    func noteWriter(_ key: RecordKey, created: Bool, sequence: Int) {
        if created {
            createdAfter[key, default: []].append(("another writer", sequence))
            lastCreate[key] = sequence
        } else {
            lastDelete[key] = sequence
        }
    }

    /// The server was restored from a backup: what it applied since may be
    /// gone, so a resent operation it applies again is new to it, not a
    /// double application.
    func forgetApplied() {
        appliedBeforeRestore.formUnion(applied)
        for id in applied { appliedStamps[id] = nil }
    }

    /// A restore from a backup brought `key` back live at `sequence`: as a
    /// create by "the restore", so a row the restore revived is not taken
    /// for a resurrection (devices that saw it deleted delete it again when
    /// they reconcile).
    func noteRestored(_ key: RecordKey, sequence: Int) {
        createdAfter[key, default: []].append(("the restore", sequence))
        lastCreate[key] = sequence
    }

    /// An upload's last chunk reached the server, which now holds the content.
    func noteUploadCompleted() { uploadsCompleted += 1 }

    /// Where the last applied create (or other writer's write) and delete of `key` happened.
    func lastChanges(of key: RecordKey) -> (create: Int?, delete: Int?) { (lastCreate[key], lastDelete[key]) }

    /// Who created `key` on the server (a device's applied create, or another writer's write), and when.
    public func creates(of key: RecordKey) -> [(device: String, sequence: Int)] { createdAfter[key] ?? [] }
}

/// A transport that forwards to the simulation's server and records every push in a ``ServerLog``.
struct LoggingTransport: SyncTransport {
    let base: any SyncTransport
    /// The server's count of applied mutations, where it can be seen.
    let appliedMutations: @Sendable () async -> Int?
    let log: ServerLog
    let device: String
    let sequence: @Sendable () -> Int

    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        try await push(mutations, expecting: nil)
    }

    func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        let before = await appliedMutations()
        let results = try await base.push(mutations, expecting: expectation)
        let after = await appliedMutations()
        let delta = before.flatMap { before in after.map { $0 - before } }
        await log.record(device: device, mutations: mutations, results: results, appliedDelta: delta, sequence: sequence())
        return results
    }

    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage { try await base.pull(request) }

    func read(kind: String, id: String) async throws(TransportError) -> ServerRow? { try await base.read(kind: kind, id: id) }

    func attachmentStatus(_ contents: [AttachmentStatusRequest]) async throws(TransportError) -> [AttachmentStatus] {
        try await base.attachmentStatus(contents)
    }

    func uploadAttachment(_ chunk: AttachmentChunk) async throws(TransportError) -> AttachmentUploadProgress {
        let progress = try await base.uploadAttachment(chunk)
        // Counted beneath the fault layer: a content whose last reply was lost still reached the server.
        if progress.stored && chunk.offset + Int64(chunk.bytes.count) == chunk.size { await log.noteUploadCompleted() }
        return progress
    }

    func downloadAttachment(_ content: ContentHash, offset: Int64, length: Int) async throws(TransportError) -> AttachmentDownload {
        try await base.downloadAttachment(content, offset: offset, length: length)
    }
}
