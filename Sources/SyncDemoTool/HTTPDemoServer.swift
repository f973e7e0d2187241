import Foundation
import SyncJournalHTTP
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// `sync-demo --server URL`: a running `sync-server`, reached only through
/// the protocol. The server's side of the story is told by other clients of
/// the same token: "the chat" pushes its own create, and an observer pulls
/// and reads to see what the server holds. Each run uses kinds of its own
/// (`pin-RUN`, `note-RUN`), so the demo can run again on the same database.
struct HTTPDemoServer: DemoServer {
    let baseURL: URL
    let token: String
    let run: String
    let timeout: Duration

    init(baseURL: URL, token: String, timeout: Duration = .seconds(10)) {
        self.baseURL = baseURL
        self.token = token
        self.timeout = timeout
        run = String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }

    var headline: String { "two devices of one user (token \"\(token)\") and sync-server at \(baseURL.absoluteString)" }
    var kinds: (pin: String, note: String) { ("pin-\(run)", "note-\(run)") }

    func transport(device: String) -> any SyncTransport {
        HTTPTransport(baseURL: baseURL, token: token, timeout: timeout)
    }

    /// Checks that the server answers and takes the token, before the demo begins.
    ///
    /// - Throws: the transport's error: ``TransportError/offline`` when nothing listens,
    ///   ``TransportError/permanent(reason:)`` for a refused token.
    func checkReachable() async throws(TransportError) {
        let observer = HTTPTransport(baseURL: baseURL, token: token, timeout: timeout)
        try await observer.checkHealth()
        _ = try await observer.pull(PullRequest(cursors: [kinds.pin: nil], limit: 1))
    }

    func liveRows(kind: String) async throws(TransportError) -> [ServerRow] {
        let observer = HTTPTransport(baseURL: baseURL, token: token, timeout: timeout)
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

    func liveRow(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        try await HTTPTransport(baseURL: baseURL, token: token, timeout: timeout).read(kind: kind, id: id)
    }

    func writeAsAnotherWriter(kind: String, id: String, fields: [String: FieldValue]) async throws(TransportError) {
        let chat = HTTPTransport(baseURL: baseURL, token: token, timeout: timeout)
        // Queued now: a fresh edit, never mistaken for a resend the server has forgotten.
        let mutation = Mutation(operationID: .random(), kind: kind, op: .create, recordID: id, fields: fields, baseUpdatedAt: nil,
                                queuedAt: SystemClock.wallClockMilliseconds())
        let results = try await chat.push([mutation])
        guard case .applied? = results.first?.outcome else {
            throw .permanent(reason: "the other writer's create of \(kind)/\(id) was answered \(results.first.map { "\($0.outcome)" } ?? "with nothing")")
        }
    }

    func appliedMutations() async -> Int? { nil }
}
