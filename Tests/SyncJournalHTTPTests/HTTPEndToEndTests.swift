import Foundation
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import SyncJournalWire
import Testing

/// The sync engine over HTTPTransport, against the reference server behind
/// a loopback HTTP face (``ReferenceHTTPHandler``).
@Suite("HTTP transport: the sync engine end to end")
struct HTTPEndToEndTests {
    static func store(_ name: String) async throws -> LocalStore {
        let disk = SimulatedDisk()
        disk.createDirectory("/device")
        return try await LocalStore.open(path: "/device/\(name).journal", options: .init(system: disk, clock: StillClock()))
    }

    static func serve(_ server: ReferenceServer) throws -> ScriptedHTTPResponder {
        let handler = ReferenceHTTPHandler(server: server, users: ["token-1": "u1", "token-2": "u1", "token-3": "u2"])
        return try ScriptedHTTPResponder(handler: { await handler.reply($0) })
    }

    @Test("two devices of one user exchange a create, an update and a delete through HTTP")
    func twoDevices() async throws {
        let server = ReferenceServer()
        let responder = try Self.serve(server)
        defer { responder.stop() }
        let phone = try await Self.store("phone")
        let tablet = try await Self.store("tablet")
        let options = SyncEngine.Options(kinds: ["pin"], jitterSeed: 1)
        let phoneEngine = SyncEngine(store: phone, transport: HTTPTransport(baseURL: responder.baseURL, token: "token-1"), options: options)
        let tabletEngine = SyncEngine(store: tablet, transport: HTTPTransport(baseURL: responder.baseURL, token: "token-2"), options: options)

        let fields: [String: FieldValue] = ["title": .string("Crux ☕️"), "grade": .int(.max), "ratio": .double(-0.0),
                                            "blob": .bytes([0, 255]), "tags": .stringSet(["a", "é"]), "gone": .null, "odd": .double(.nan)]
        let id = try await phone.create("pin", id: "p1", fields: fields).id
        #expect(await phoneEngine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await tabletEngine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await tablet.record("pin", id: id)?.fields == fields)

        _ = try await tablet.update("pin", id: id, changes: ["grade": .int(.min)])
        #expect(await tabletEngine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await phoneEngine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await phone.record("pin", id: id)?.fields["grade"] == .int(.min))

        try await phone.delete("pin", id: id)
        #expect(await phoneEngine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await tabletEngine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))
        #expect(try await tablet.record("pin", id: id) == nil)
        #expect(responder.requests.allSatisfy { $0.method == "POST" })
    }

    @Test("each error the reference server throws comes back through HTTP as the same class")
    func errorClassesRoundTrip() async throws {
        let errors: [TransportError] = [
            .permanent(reason: "no"), .tooLarge(reason: "batch"), .cursorExpired(kinds: ["note", "pin"]),
            .transient(reason: "busy", retryAfter: .milliseconds(3_000)), .transient(reason: "busy", retryAfter: nil),
            .serverMismatch(.differentServer(expected: ServerIdentity("x")!, found: ServerIdentity("y")!)),
            .serverMismatch(.behind(identity: ServerIdentity("x")!, seenStamp: 10, latestStamp: 9)),
        ]
        let responder = try ScriptedHTTPResponder(errors.map(ReferenceHTTPHandler.reply))
        defer { responder.stop() }
        let transport = HTTPTransport(baseURL: responder.baseURL, token: "token-1")
        for expected in errors {
            let received: TransportError?
            do { _ = try await transport.pull(PullRequest(cursors: ["pin": nil, "note": nil], limit: 10)); received = nil } catch { received = error }
            switch (expected, received) {
            case (.permanent, .permanent?), (.tooLarge, .tooLarge?): break
            case (.cursorExpired(let kinds), .cursorExpired(let back)?): #expect(back == kinds)
            case (.transient(_, let after), .transient(_, let back)?): #expect(back == after)
            case (.serverMismatch(let mismatch), .serverMismatch(let back)?): #expect(back == mismatch)
            default: Issue.record("\(expected) came back as \(String(describing: received))")
            }
        }
    }

    @Test("the HTTP face honours a pull's spaces: a member's pull brings the shared rows, the space's description and its cursors; without spaces only personal rows")
    func pullAcrossSpaces() async throws {
        let server = ReferenceServer()
        let responder = try Self.serve(server)
        defer { responder.stop() }
        let trip = SpaceID.random()
        try await server.change(user: "u2", .create(trip, name: "Trip"))
        try await server.change(user: "u2", .setMember(trip, user: "u1", role: .viewer))
        let shared = await server.write(user: "u2", kind: "pin", id: "p1", fields: ["title": .string("shared")], space: trip)
        let personal = await server.write(user: "u1", kind: "pin", id: "mine", fields: [:])
        let transport = HTTPTransport(baseURL: responder.baseURL, token: "token-1")
        let page = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10, spaces: [:]))
        #expect(page.rows == [personal, shared] && page.spaces.map(\.id) == [trip] && page.spaces.first?.role == .viewer)
        #expect(page.nextSpaceCursors[trip]?["pin"] == PullCursor(updatedAt: shared.updatedAt, id: "p1"))
        let plain = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(plain.rows == [personal] && plain.spaces.isEmpty)
        #expect(try await transport.read(RecordKey(kind: "pin", id: "p1", space: trip)) == shared)
    }

    @Test("a push refused as too large makes the engine split the batch, over HTTP")
    func tooLargeSplits() async throws {
        let server = ReferenceServer()
        await server.setMaximumBatchSize(1)
        let responder = try Self.serve(server)
        defer { responder.stop() }
        let store = try await Self.store("device")
        for index in 0..<3 { _ = try await store.create("pin", id: "p\(index)", fields: ["n": .int(Int64(index))]) }
        let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: responder.baseURL, token: "token-1"),
                                options: .init(kinds: ["pin"], jitterSeed: 1))
        var outcome = await engine.sync()
        for _ in 0..<5 where try await !store.outboxOperations().isEmpty { outcome = await engine.sync() }
        #expect(try await store.outboxOperations().isEmpty, "\(outcome)")
        #expect(await server.refusedTooLarge > 0)
        #expect(await server.acceptedPushSizes.allSatisfy { $0 == 1 })
        #expect(await server.rows(user: "u1", kind: "pin").count == 3)
    }

    @Test("a request with an unknown token is refused with 401 and the engine reports an error, nothing applied")
    func unknownToken() async throws {
        let server = ReferenceServer()
        let responder = try Self.serve(server)
        defer { responder.stop() }
        let store = try await Self.store("device")
        _ = try await store.create("pin", id: "p1", fields: ["n": .int(1)])
        let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: responder.baseURL, token: "stolen"),
                                options: .init(kinds: ["pin"], jitterSeed: 1))
        let outcome = await engine.sync()
        #expect(outcome.isFailure, "\(outcome)")
        #expect(await server.rows(user: "u1", kind: "pin").isEmpty)
    }
}

extension SyncOutcome {
    var isFailure: Bool {
        switch self {
        case .ok, .skipped, .deadlineReached: return false
        case .retryLater, .failed: return true
        }
    }
}
