import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// The simulator's default server: the in-memory ``ReferenceServer``, user u1.
struct ReferenceSimulationServer: SimulationServer {
    /// A fixed identity, so a run repeats byte for byte from its seed.
    let server = ReferenceServer(identity: ServerIdentity("simulation-server-1"))
    /// The last backup taken, and how many restores there were.
    private let backup = Mutex<(snapshot: ReferenceServerSnapshot?, restores: Int)>((nil, 0))

    var canRestore: Bool { true }

    func backUp() async {
        let copy = await server.snapshot()
        backup.withLock { $0.snapshot = copy }
    }

    /// Restores the last backup and gives it a new identity, as the operator
    /// of a restored database does (`sync-server --new-identity`): a restore
    /// is found by stamps only until other writes pass the devices' seen
    /// stamps (this server's stamps follow its clock, which goes on), while a
    /// new identity is found by every device at its next request.
    func restoreBackup() async -> Bool {
        guard let (copy, number) = backup.withLock({ state -> (ReferenceServerSnapshot, Int)? in
            guard let snapshot = state.snapshot else { return nil }
            state.restores += 1
            return (snapshot, state.restores)
        }) else { return false }
        await server.restore(copy)
        await server.setIdentity(ServerIdentity("simulation-server-1-restored-\(number)"))
        return true
    }

    /// The identity of the server's database now.
    func identity() async -> ServerIdentity? { await server.identity }
    /// The largest stamp the server issued or handed out.
    func latestStamp() async -> Int64 { await server.latestStamp }
    /// A backup of the server's database as it is now.
    func snapshot() async -> ReferenceServerSnapshot { await server.snapshot() }
    /// Puts the server back to `snapshot` (a backup restored: same identity, earlier stamps).
    func restore(_ snapshot: ReferenceServerSnapshot) async { await server.restore(snapshot) }
    /// Replaces the database with an empty one with `identity` (a reset).
    func reset(identity: ServerIdentity?) async { await server.reset(identity: identity) }
    /// Keeps the data under a new identity (an operator's `--new-identity`).
    func setIdentity(_ identity: ServerIdentity?) async { await server.setIdentity(identity) }

    var summary: String { "" }
    var isDeterministic: Bool { true }
    var hasRecordFaults: Bool { true }

    func transport(device: String, user: String) -> any SyncTransport { server.transport(user: user) }
    func appliedMutations() async -> Int? { await server.appliedMutations }
    func tick(_ milliseconds: Int64) async { await server.tick(milliseconds) }
    func row(kind: String, id: String) async throws(TransportError) -> ServerRow? { await server.row(kind: kind, id: id) }
    func rows(kind: String, user: String) async throws(TransportError) -> [ServerRow] {
        let personal = await server.rows(user: user, kind: kind)
        // Shared rows as a first pull over every space of the user brings them.
        let page = try await server.pull(user: user, cursors: [kind: nil], limit: 100_000, resync: true, spaces: [:])
        let shared = page.rows.filter { !$0.space.isPersonal && !$0.isTombstone && $0.kind == kind }
            .sorted { $0.space != $1.space ? $0.space < $1.space : $0.id < $1.id }
        return personal + shared
    }

    func row(_ key: RecordKey) async throws(TransportError) -> ServerRow? { await server.read(user: "u1", key) }
    func spaces(user: String) async throws(TransportError) -> [Space] { await server.spaces(user: user) }
    func change(_ change: SpaceChange, user: String) async throws(TransportError) { _ = try await server.change(user: user, change) }

    func write(kind: String, id: String, fields: [String: FieldValue]) async throws(TransportError) -> Bool {
        _ = await server.write(user: "u1", kind: kind, id: id, fields: fields)
        return true
    }

    func update(kind: String, id: String, changes: [String: FieldValue]) async throws(TransportError) {
        _ = await server.update(kind: kind, id: id, changes: changes)
    }

    func delete(kind: String, id: String) async throws(TransportError) -> Bool {
        await server.delete(kind: kind, id: id) != nil
    }

    func setRecordFault(kind: String, id: String, permanent: Bool, times: Int) async {
        if permanent {
            await server.rejectPermanently(kind: kind, id: id, reason: "422 refused by a check (simulated)")
        } else {
            await server.failTransiently(kind: kind, id: id, reason: "lock timeout (simulated)", times: times)
        }
    }

    func clearRecordFaults(kind: String, id: String) async { await server.clearFailures(kind: kind, id: id) }

    func holds(_ attachment: Attachment, user: String) async throws(TransportError) -> Bool {
        try await server.attachmentStatus(user: user, [AttachmentStatusRequest(content: attachment.content, size: attachment.size)]).first?.stored ?? false
    }

    func limitAttachments(maximumBytes: Int64, graceMilliseconds: Int64) async {
        await server.setAttachmentLimits(maximumBytes: maximumBytes, graceMilliseconds: graceMilliseconds)
    }

    func storedContents() async -> Set<ContentHash> { await server.storedContents }
    var collectsAttachments: Bool { true }
    func collectAttachments() async -> Int { await server.collectAttachments().contents }
}
