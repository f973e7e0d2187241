import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import Testing

/// A failed sync says why as a case the app can act on, not as a sentence to
/// search: the resync's own ways of stopping, and the text people read.
@Suite("Sync engine: typed failures")
struct SyncFailureTests {
    /// A server that refuses every ordinary pull's cursor as expired and
    /// answers re-pulls with `resync`.
    private static func expiringServer(resync: @escaping @Sendable (PullRequest) async throws(TransportError) -> PullPage) -> ScriptedTransport {
        ScriptedTransport(onPull: { request throws(TransportError) in
            guard request.isResync else { throw .cursorExpired(kinds: ["pin"]) }
            return try await resync(request)
        })
    }

    @Test("a server that refuses a fresh cursor again right after the resync stops the sync with pullNotFinished(.cursorExpiredAgain)")
    func cursorExpiredAgainAfterResync() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        let transport = Self.expiringServer { _ throws(TransportError) in PullPage(rows: [], nextCursors: [:], hasMore: false) }
        let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"]))
        #expect(await engine.sync().failure == .pullNotFinished(.cursorExpiredAgain(kinds: ["pin"])))
    }

    @Test("a resync that is still paging at maximumResyncPages stops with pullNotFinished(.resyncPageLimit) naming the kind, and keeps nothing of it")
    func resyncPageLimit() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        let transport = Self.expiringServer { request throws(TransportError) in
            let after = (request.cursors["pin"] ?? nil)?.updatedAt ?? 0
            let next = serverRow("r\(after + 1)", at: after + 1)
            return PullPage(rows: [next], nextCursors: ["pin": cursor(after: next)], hasMore: true)
        }
        let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"], maximumResyncPages: 3))
        #expect(await engine.sync().failure == .pullNotFinished(.resyncPageLimit(kind: "pin", pages: 3)))
        #expect(try await store.records("pin").isEmpty)
    }

    @Test("a resync the transport refuses stops with pullNotFinished(.resyncRefused) carrying the kind and the transport's error")
    func resyncRefused() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        let transport = Self.expiringServer { _ throws(TransportError) in throw .permanent(reason: "403 forbidden") }
        let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"]))
        #expect(await engine.sync().failure == .pullNotFinished(.resyncRefused(kind: "pin", .permanent(reason: "403 forbidden"))))
    }

    @Test("a failed outcome reads as before: \"error: \" and the failure's one line")
    func descriptionsForPeople() {
        #expect(SyncOutcome.failed(.pullNotFinished(.pageLimit(pages: 50))).description
                    == "error: pull did not finish after 50 pages; the server's cursor is not advancing")
        #expect(SyncOutcome.failed(.store(.retired)).description == "error: the store was retired")
        #expect(SyncFailure.malformedReply(.pushResultsMismatch(results: 1, mutations: 2)).description
                    == "malformed push reply: 1 results for 2 mutations")
        #expect(SyncFailure.transport(.permanent(reason: "400 bad request")).description == "permanent: 400 bad request")
        #expect(SyncOutcome.failed(.authentication(reason: "token expired")).name == "error")
    }
}
