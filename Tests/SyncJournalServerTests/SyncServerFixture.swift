import Foundation
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import SyncJournalWire

/// An in-process `sync-server` on a free port over a temporary database,
/// with users alice (token `t-alice`) and bob (`t-bob`).
final class SyncServerFixture {
    let directory: TemporaryDirectory
    let server: SyncServer

    init(maximumBatchSize: Int = 3, maximumBodyBytes: Int = 16_384) throws {
        directory = try TemporaryDirectory(prefix: "syncjournal-server")
        var options = SyncServerOptions()
        options.port = 0
        options.databasePath = directory.file("sync.sqlite")
        options.maximumBatchSize = maximumBatchSize
        options.maximumBodyBytes = maximumBodyBytes
        try options.users.add(token: "t-alice", user: "alice")
        try options.users.add(token: "t-bob", user: "bob")
        server = try SyncServer(options: options)
        try server.start()
    }

    deinit {
        server.shutdown()
        directory.remove()
    }

    var port: Int { server.port }

    /// A raw request's bytes: a POST with a JSON body and, when given, a bearer token.
    static func post(_ path: String, body: [UInt8], token: String?, close: Bool = false) -> [UInt8] {
        var head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if close { head += "Connection: close\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    /// Sends one request on a new connection and reads the response.
    func send(_ path: String, body: [UInt8], token: String? = "t-alice") throws -> RawClient.Response {
        let client = try RawClient(port: port)
        try client.send(Self.post(path, body: body, token: token))
        return try client.readResponse()
    }

    func push(_ mutations: [Mutation], token: String = "t-alice") throws -> [MutationResult] {
        let response = try send("/v1/sync/push", body: PushRequestCodec.encode(mutations), token: token)
        guard response.status == 200 else { throw RawClient.Failure(description: "push: \(response.status) \(response.text)") }
        return try PushReplyCodec.decode(response.body, answering: mutations)
    }

    func pullAll(kinds: [String] = ["pin"], token: String = "t-alice") throws -> [ServerRow] {
        let request = PullRequest(cursors: Dictionary(uniqueKeysWithValues: kinds.map { ($0, PullCursor?.none) }), limit: 1_000)
        let response = try send("/v1/sync/pull", body: PullRequestCodec.encode(request), token: token)
        guard response.status == 200 else { throw RawClient.Failure(description: "pull: \(response.status) \(response.text)") }
        return try PullPageCodec.decode(response.body).rows
    }

    /// The error body of a response.
    static func error(_ response: RawClient.Response) throws -> ErrorBody {
        try ErrorBodyCodec.decode(response.body)
    }
}
