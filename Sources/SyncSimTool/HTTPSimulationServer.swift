import Foundation
import SyncJournalHTTP
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// `sync-sim --server URL`: a running `sync-server`. Devices reach it over
/// ``HTTPTransport``; "another writer" is one more client of the same token
/// that reads a row and pushes its change on the row's stamp; the simulator
/// reads the server's state with reads and pulls. Kinds get a per-run suffix
/// (``KindRenamingTransport``), so runs never see each other's rows.
/// Server-side record faults do not exist over HTTP.
struct HTTPSimulationServer: SimulationServer {
    let baseURL: URL
    let token: String
    let suffix: String
    let timeout: Duration

    init(baseURL: URL, token: String, timeout: Duration = .seconds(10)) {
        self.baseURL = baseURL
        self.token = token
        self.timeout = timeout
        suffix = "-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }

    var summary: String {
        "against sync-server at \(baseURL.absoluteString), kinds note\(suffix) and pin\(suffix); real time and a real server, "
            + "so a run is not byte-deterministic (the seed fixes the client-side choices only)"
    }
    var isDeterministic: Bool { false }
    var hasRecordFaults: Bool { false }

    /// A transport to the server with this run's kind suffix.
    func client() -> KindRenamingTransport {
        KindRenamingTransport(base: HTTPTransport(baseURL: baseURL, token: token, timeout: timeout), suffix: suffix)
    }

    /// Checks the server answers and takes the token.
    func checkReachable() async throws(TransportError) {
        let probe = HTTPTransport(baseURL: baseURL, token: token, timeout: timeout)
        try await probe.checkHealth()
        _ = try await client().pull(PullRequest(cursors: ["pin": nil], limit: 1))
    }

    /// One token is one user: every device syncs as the token's (`--users` is 1 here).
    func transport(device: String, user: String) -> any SyncTransport { client() }
    func appliedMutations() async -> Int? { nil }
    func tick(_ milliseconds: Int64) async {}

    func row(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        try await client().read(kind: kind, id: id)
    }

    func row(_ key: RecordKey) async throws(TransportError) -> ServerRow? {
        guard key.space.isPersonal else { return nil }
        return try await row(kind: key.kind, id: key.id)
    }

    /// The token's user is in no shared space of the run's (`--users` is 1 against a real server).
    func spaces(user: String) async throws(TransportError) -> [Space] { [] }

    func change(_ change: SpaceChange, user: String) async throws(TransportError) {
        throw .permanent(reason: "sync-sim shares no list against a real server (--users is 1 there)")
    }

    func rows(kind: String, user: String) async throws(TransportError) -> [ServerRow] {
        let observer = client()
        var cursor: PullCursor?
        var live: [String: ServerRow] = [:]
        while true {
            let page = try await observer.pull(PullRequest(cursors: [kind: cursor], limit: 500))
            for row in page.rows where row.kind == kind { live[row.id] = row.deletedAt == nil ? row : nil }
            cursor = page.nextCursors[kind] ?? cursor
            if !page.hasMore { break }
        }
        return live.values.sorted { $0.id < $1.id }
    }

    /// Pushes one mutation as the other writer; `true` when applied.
    func pushAsWriter(_ op: OperationKind, kind: String, id: String, fields: [String: FieldValue], base: Int64?) async throws(TransportError) -> Bool {
        // Queued now, by the server's own clock: a fresh edit, never mistaken for a forgotten resend.
        let mutation = Mutation(operationID: .random(), kind: kind, op: op, recordID: id, fields: fields, baseUpdatedAt: base,
                                queuedAt: SystemClock.wallClockMilliseconds())
        guard case .applied? = try await client().push([mutation]).first?.outcome else { return false }
        return true
    }

    func write(kind: String, id: String, fields: [String: FieldValue]) async throws(TransportError) -> Bool {
        // A live row is overwritten field by field on its stamp; otherwise the writer creates it.
        if let current = try await row(kind: kind, id: id) {
            return try await pushAsWriter(.update, kind: kind, id: id, fields: fields, base: current.updatedAt)
        }
        return try await pushAsWriter(.create, kind: kind, id: id, fields: fields, base: nil)
    }

    func update(kind: String, id: String, changes: [String: FieldValue]) async throws(TransportError) {
        guard let current = try await row(kind: kind, id: id) else { return }
        _ = try await pushAsWriter(.update, kind: kind, id: id, fields: changes, base: current.updatedAt)
    }

    func delete(kind: String, id: String) async throws(TransportError) -> Bool {
        guard let current = try await row(kind: kind, id: id) else { return false }
        return try await pushAsWriter(.delete, kind: kind, id: id, fields: [:], base: current.updatedAt)
    }

    func setRecordFault(kind: String, id: String, permanent: Bool, times: Int) async {}
    func clearRecordFaults(kind: String, id: String) async {}

    /// As the status call answers the token's user (the only user here).
    func holds(_ attachment: Attachment, user: String) async throws(TransportError) -> Bool {
        try await client().attachmentStatus([AttachmentStatusRequest(content: attachment.content, size: attachment.size)]).first?.stored ?? false
    }

    /// A running sync-server's limits are its own (`--max-attachment-bytes`, `--attachment-grace-seconds`).
    func limitAttachments(maximumBytes: Int64, graceMilliseconds: Int64) async {}
    func storedContents() async -> Set<ContentHash> { [] }
    /// A running sync-server collects on its own schedule.
    var collectsAttachments: Bool { false }
    func collectAttachments() async -> Int { 0 }
    /// A running sync-server's database is not the simulator's to restore.
    var canRestore: Bool { false }
    func backUp() async {}
    func restoreBackup() async -> Bool { false }
}
