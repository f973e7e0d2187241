import Foundation
import Testing
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalTesting

/// The operator's story on SQLite: a device synced, the server stopped, its
/// database file replaced by a copy taken before the device's last syncs,
/// the server started again. The device's next push is refused as behind,
/// with nothing applied; after `sync-server --new-identity` it is refused as
/// another server, however far new writes have moved the stamps.
@Suite("sync-server: a database restored from an earlier copy")
struct SyncServerRestoreTests {
    static func options(_ path: String) throws -> SyncServerOptions {
        var options = SyncServerOptions()
        options.port = 0
        options.databasePath = path
        try options.users.add(token: "t-alice", user: "alice")
        return options
    }

    static func started(_ path: String) throws -> SyncServer {
        let server = try SyncServer(options: options(path))
        try server.start()
        return server
    }

    static func transport(_ server: SyncServer) -> HTTPTransport {
        HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: "t-alice")
    }

    static func create(_ id: String) -> Mutation {
        Mutation(operationID: .random(), kind: "pin", op: .create, recordID: id, fields: ["title": .string(id)], baseUpdatedAt: nil)
    }

    /// The error a call throws, or `nil`.
    static func failure<T>(_ body: () async throws(TransportError) -> T) async -> TransportError? {
        do throws(TransportError) {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    /// Copies the database file and its WAL companions, if any, from `source` to `target`.
    static func copyDatabase(_ source: String, to target: String) throws {
        let files = FileManager.default
        for suffix in ["", "-wal", "-shm"] {
            if files.fileExists(atPath: target + suffix) { try files.removeItem(atPath: target + suffix) }
            if files.fileExists(atPath: source + suffix) { try files.copyItem(atPath: source + suffix, toPath: target + suffix) }
        }
    }

    @Test("a copy from before the device's last three syncs is refused as behind; after --new-identity, as another server")
    func restoredCopy() async throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-restore")
        defer { directory.remove() }
        let path = directory.file("sync.sqlite")
        let backup = directory.file("backup.sqlite")

        var server = try Self.started(path)
        var transport = Self.transport(server)
        _ = try await transport.push([Self.create("p1")])
        let first = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 100))
        let identity = try #require(first.server)
        server.shutdown()
        try Self.copyDatabase(path, to: backup)

        server = try Self.started(path)
        transport = Self.transport(server)
        var seen: Int64 = 0
        for round in 2...4 {
            let expectation = ServerExpectation(identity: identity, seenStamp: seen == 0 ? nil : seen)
            _ = try await transport.push([Self.create("p\(round)")], expecting: expectation)
            let page = try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 100, expectation: expectation))
            seen = try #require(page.nextCursors["pin"]).updatedAt
            #expect(page.server == identity)
        }
        server.shutdown()

        try Self.copyDatabase(backup, to: path)
        server = try Self.started(path)
        transport = Self.transport(server)
        let expectation = ServerExpectation(identity: identity, seenStamp: seen)
        let behind = await Self.failure { () async throws(TransportError) in try await transport.push([Self.create("p5")], expecting: expectation) }
        guard case .serverMismatch(.behind(let found, let seenStamp, let latest))? = behind else {
            Issue.record("not refused as behind: \(String(describing: behind))")
            return
        }
        #expect(found == identity && seenStamp == seen && latest < seen)
        #expect(try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 100)).rows.map(\.id) == ["p1"], "nothing applied")
        server.shutdown()

        let line = try SyncServer.replaceIdentity(options: try Self.options(path))
        server = try Self.started(path)
        defer { server.shutdown() }
        transport = Self.transport(server)
        let fresh = try #require(server.storage.identity)
        #expect(fresh != identity && line.contains(fresh.text))
        // Another device's writes move the stamps past the device's: only the new identity still tells.
        for index in 0..<3 { _ = try await transport.push([Self.create("q\(index)")]) }
        let different = await Self.failure { () async throws(TransportError) in
            try await transport.pull(PullRequest(cursors: ["pin": nil], limit: 100, expectation: expectation))
        }
        #expect(different == .serverMismatch(.differentServer(expected: identity, found: fresh)))
    }
}
