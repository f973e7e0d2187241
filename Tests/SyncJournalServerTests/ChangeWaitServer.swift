import Foundation
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalTesting
import SyncJournalWire

/// An in-process `sync-server` on one backend (a SQLite file, or a
/// PostgreSQL schema of its own) for the change-wait tests, with users alice
/// (`t-alice`) and bob (`t-bob`). A second server on the same database
/// (``sibling()``) shares PostgreSQL the way two processes would.
final class ChangeWaitServer {
    let server: SyncServer
    private let options: SyncServerOptions
    private let directory: TemporaryDirectory?
    private let schema: PostgreSQLTestSchema?

    init(_ backend: StorageBackend, maximumWaitMilliseconds: Int64 = 60_000, maximumWaitsPerUser: Int = 16) throws {
        var options = SyncServerOptions()
        options.port = 0
        options.maximumChangeWaitMilliseconds = maximumWaitMilliseconds
        options.maximumChangeWaitsPerUser = maximumWaitsPerUser
        try options.users.add(token: "t-alice", user: "alice")
        try options.users.add(token: "t-bob", user: "bob")
        switch backend {
        case .sqlite:
            let directory = try TemporaryDirectory(prefix: "syncjournal-waits")
            options.databasePath = directory.file("sync.sqlite")
            self.directory = directory
            schema = nil
        case .postgres:
            let schema = try PostgreSQLTestSchema()
            options.postgresConnection = schema.connection
            self.schema = schema
            directory = nil
        }
        self.options = options
        server = try SyncServer(options: options)
        try server.start()
    }

    private init(options: SyncServerOptions, schema: PostgreSQLTestSchema?) throws {
        self.options = options
        self.schema = schema
        directory = nil
        server = try SyncServer(options: options)
        try server.start()
    }

    /// Another server on the same PostgreSQL schema.
    func sibling() throws -> ChangeWaitServer {
        try ChangeWaitServer(options: options, schema: schema)
    }

    deinit {
        server.shutdown()
        directory?.remove()
    }

    var port: Int { server.port }

    /// The SQLite file (with ``StorageBackend/sqlite``).
    var databasePath: String { options.databasePath }

    /// How long a test waits for the server to hold (or release) waits before
    /// it fails: a bound against hanging, not a time the server must meet (a
    /// full `swift test` on 2 cores can keep a task from running for a long time).
    static let patience = 120_000

    /// A wait's request bytes.
    static func waitRequest(_ cursors: [String: PullCursor?], timeoutMilliseconds: Int64, token: String = "t-alice") -> [UInt8] {
        SyncServerFixture.post(SyncEndpoint.wait.path,
                               body: ChangeWaitRequestCodec.encode(ChangeWaitRequest(cursors: cursors, timeoutMilliseconds: timeoutMilliseconds)),
                               token: token)
    }

    /// Opens a wait on a new connection and returns once the server has parked it
    /// (it does not read the answer).
    func openWait(_ cursors: [String: PullCursor?], token: String, holding count: Int) throws -> RawClient {
        let client = try RawClient(port: port, timeoutSeconds: 60)
        try client.send(Self.waitRequest(cursors, timeoutMilliseconds: 60_000, token: token))
        // Parked, not only held: a wait still in its first look at storage
        // could see a push made next in that look instead of being woken.
        guard server.changeWaits.waitUntil(timeoutMilliseconds: Self.patience, parkedOnly: true, { $0 >= count }) else {
            throw RawClient.Failure(description: "the server never parked \(count) waits")
        }
        return client
    }

    /// Sends a wait and reads its answer on a new connection.
    func wait(_ cursors: [String: PullCursor?], timeoutMilliseconds: Int64, token: String = "t-alice") throws -> RawClient.Response {
        let client = try RawClient(port: port, timeoutSeconds: 60)
        try client.send(Self.waitRequest(cursors, timeoutMilliseconds: timeoutMilliseconds, token: token))
        return try client.readResponse()
    }

    /// Pushes one create of `kind`/`id` as the token's user.
    @discardableResult
    func push(_ kind: String, _ id: String, token: String = "t-alice") throws -> ServerRow {
        let mutation = Mutations.create(id, kind: kind)
        let client = try RawClient(port: port)
        try client.send(SyncServerFixture.post(SyncEndpoint.push.path, body: PushRequestCodec.encode([mutation]), token: token))
        let response = try client.readResponse()
        guard response.status == 200, case .applied(let row)? = try PushReplyCodec.decode(response.body, answering: [mutation]).first?.outcome else {
            throw RawClient.Failure(description: "push: \(response.status) \(response.text)")
        }
        return row
    }

    /// Whether an answer is `200 {"changed": changed}`.
    static func answers(_ response: RawClient.Response, changed: Bool) -> Bool {
        response.status == 200 && (try? ChangeWaitReplyCodec.decode(response.body)) == changed
    }
}

extension ChangeWaitServer {
    /// ``ChangeWaitRegistry/waitUntil(timeoutMilliseconds:_:)`` off the
    /// concurrency pool, so an async test does not hold one of its threads.
    func held(_ condition: @escaping @Sendable (Int) -> Bool) async -> Bool {
        let waits = server.changeWaits
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: waits.waitUntil(timeoutMilliseconds: Self.patience, condition)) }
        }
    }
}
