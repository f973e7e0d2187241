import Dispatch
import Foundation
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalTesting
import SyncJournalWire
import Testing
@testable import SyncJournalServer

@Suite("per-user limits: the token before the body, fair workers, a body budget")
struct UserLimitsTests {
    /// A server over a storage that holds alice's pushes, with users alice and bob.
    final class Fixture {
        let directory: TemporaryDirectory
        let storage: HoldingStorage
        let server: HTTPServer

        init(_ change: (inout HTTPServerConfiguration) -> Void) throws {
            directory = try TemporaryDirectory(prefix: "syncjournal-limits")
            storage = try HoldingStorage(path: directory.file("sync.sqlite"), holding: "alice")
            var users = UserDirectory()
            try users.add(token: "t-alice", user: "alice")
            try users.add(token: "t-bob", user: "bob")
            var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
            change(&configuration)
            server = HTTPServer(configuration: configuration, responder: SyncRouter(storage: storage, users: users))
            try server.start()
        }

        deinit {
            // A test that failed half-way may leave pushes held: let them all go, so shutdown can finish.
            for _ in 0..<64 { storage.released.signal() }
            server.shutdown()
            storage.closeConnections()
            directory.remove()
        }

        /// A push of one record whose text field is `padding` bytes long.
        static func push(_ id: String, token: String, padding: Int = 10) -> [UInt8] {
            let body = PushRequestCodec.encode([Mutations.create(id, ["title": .string(String(repeating: "x", count: padding))])])
            return SyncServerFixture.post("/v1/sync/push", body: body, token: token)
        }
    }

    @Test("a bad token is answered 401 while the client has sent only the head of a large body, and the connection closes")
    func unauthorizedBeforeBody() throws {
        let fixture = try Fixture { $0.maximumBodyBytes = 1 << 20 }
        let client = try RawClient(port: fixture.server.port)
        try client.send("POST /v1/sync/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-mallory\r\nContent-Length: 1000000\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 401)
        #expect(try SyncServerFixture.error(response).code == .unauthorized)
        #expect(response.header("connection") == "close")
        #expect(try client.readsEndOfFile())
    }

    @Test("a missing token is 401 before the body too; a good token then reads the body as before")
    func missingTokenBeforeBody() throws {
        let fixture = try Fixture { $0.maximumBodyBytes = 1 << 20 }
        let missing = try RawClient(port: fixture.server.port)
        try missing.send("POST /v1/sync/pull HTTP/1.1\r\nHost: x\r\nContent-Length: 500000\r\n\r\n")
        #expect(try missing.readResponse().status == 401)
        let good = try RawClient(port: fixture.server.port)
        let pull = PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 10))
        try good.send(SyncServerFixture.post("/v1/sync/pull", body: pull, token: "t-bob"))
        #expect(try good.readResponse().status == 200)
    }

    @Test("one user's concurrent large pushes, held in storage, do not block another user's small push")
    func fairWorkers() throws {
        // Three workers, at most two per user: without the per-user cap,
        // alice's five held pushes would take every worker and bob would wait.
        let fixture = try Fixture {
            $0.workerThreads = 3
            $0.maximumConcurrentRequestsPerOwner = 2
            $0.maximumBodyBytes = 64 * 1024
        }
        let port = fixture.server.port
        let alice = try (0..<5).map { index in
            let client = try RawClient(port: port, timeoutSeconds: 60)
            try client.send(Fixture.push("a\(index)", token: "t-alice", padding: 40_000))
            return client
        }
        for _ in 0..<2 { #expect(fixture.storage.entered.wait(timeout: .now() + 30) == .success) }
        let bob = try RawClient(port: port)
        try bob.send(Fixture.push("b1", token: "t-bob"))
        let answer = try bob.readResponse()
        #expect(answer.status == 200, "bob is served while alice's pushes are held")
        #expect(fixture.storage.entered.wait(timeout: .now() + .milliseconds(50)) == .timedOut,
                "no third push of alice entered storage")
        for _ in 0..<5 { fixture.storage.released.signal() }
        for client in alice { #expect(try client.readResponse().status == 200) }
    }

    @Test("over its body budget a user's next push is 429 with Retry-After, delivered before the close; another user proceeds")
    func bodyBudget() throws {
        let fixture = try Fixture {
            $0.maximumBodyBytes = 16 * 1024
            // One push of 13,000 bytes fits, two do not.
            $0.maximumBodyBytesInFlightPerOwner = 24 * 1024
            $0.maximumConcurrentRequestsPerOwner = 4
        }
        let port = fixture.server.port
        let first = try RawClient(port: port)
        try first.send(Fixture.push("a1", token: "t-alice", padding: 13_000))
        #expect(fixture.storage.entered.wait(timeout: .now() + 30) == .success)
        let second = try RawClient(port: port)
        try second.send(Fixture.push("a2", token: "t-alice", padding: 13_000))
        let refused = try second.readResponse()
        #expect(refused.status == 429)
        #expect(refused.header("retry-after") == "1")
        #expect(try SyncServerFixture.error(refused).code == .tooManyRequests)
        #expect(try second.readsEndOfFile())
        let bob = try RawClient(port: port)
        try bob.send(Fixture.push("b1", token: "t-bob", padding: 13_000))
        #expect(try bob.readResponse().status == 200)
        fixture.storage.released.signal()
        #expect(try first.readResponse().status == 200)
        // Answered, alice's bytes are given back: her next push is taken.
        let third = try RawClient(port: port)
        try third.send(Fixture.push("a3", token: "t-alice", padding: 13_000))
        #expect(fixture.storage.entered.wait(timeout: .now() + 30) == .success)
        fixture.storage.released.signal()
        #expect(try third.readResponse().status == 200)
    }
}
