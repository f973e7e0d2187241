import Foundation
import Testing
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// Live sync end to end: SyncEngine and HTTPTransport waiting for changes on sync-server.
@Suite("live sync over HTTPTransport's waits for changes")
struct ChangeWaitEngineTests {
    @Test("a started device with no idle pulls sees another device's edit in its observed query without editing anything",
          arguments: StorageBackend.tested)
    func liveEditArrives(_ backend: StorageBackend) async throws {
        let server = try ChangeWaitServer(backend)
        let url = URL(string: "http://127.0.0.1:\(server.port)")!
        let phone = try await EngineOverHTTPTests.store("phone")
        let tablet = try await EngineOverHTTPTests.store("tablet")
        let phoneEngine = SyncEngine(store: phone, transport: HTTPTransport(baseURL: url, token: "t-alice", timeout: .seconds(20)),
                                     options: .init(kinds: ["pin"], jitterSeed: 1))
        let tabletEngine = SyncEngine(store: tablet, transport: HTTPTransport(baseURL: url, token: "t-alice", timeout: .seconds(20)),
                                      options: .init(kinds: ["pin"], jitterSeed: 2, changeWaitTimeout: .seconds(30)))
        await tabletEngine.start()
        // The tablet's first wait is parked (it found nothing), so the edit below must wake it.
        #expect(await server.held { $0 == 1 })
        let seen = Task {
            for await pins in tablet.observe(Query("pin")) where pins.contains(where: { $0.id == "p1" }) { return true }
            return false
        }
        _ = try await phone.create("pin", id: "p1", fields: ["title": .string("Crux")])
        #expect(await phoneEngine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await seen.value)
        #expect(try await tablet.record("pin", id: "p1")?.fields == ["title": .string("Crux")])
        await tabletEngine.stop()
    }

    @Test("HTTPTransport's wait answers changed at once for rows already there, and timed out at the server's cap")
    func transportWaits() async throws {
        let server = try ChangeWaitServer(.sqlite, maximumWaitMilliseconds: 100)
        let transport = HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: "t-alice", timeout: .seconds(20))
        #expect(try await transport.waitForChanges(after: ["pin": nil], timeout: .seconds(30)) == .timedOut)
        try server.push("pin", "p1")
        #expect(try await transport.waitForChanges(after: ["pin": nil], timeout: .seconds(30)) == .changed)
    }

    @Test("cancelling the task waiting in HTTPTransport ends the request, and the server drops the wait")
    func cancellationDropsTheWait() async throws {
        let server = try ChangeWaitServer(.sqlite)
        let transport = HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: "t-alice", timeout: .seconds(20))
        let waiting = Task { try await transport.waitForChanges(after: ["pin": nil], timeout: .seconds(30)) }
        #expect(await server.held { $0 == 1 })
        waiting.cancel()
        await #expect(throws: TransportError.self) { try await waiting.value }
        #expect(await server.held { $0 == 0 }, "the cancelled request's connection closed")
    }
}
