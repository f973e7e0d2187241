import SyncJournalProtocol
import SyncJournalServer
import SyncJournalWire

/// `sync-server`'s request handling in-process: its router over a fresh
/// storage of one backend, with users alice (token `t-alice`) and bob
/// (`t-bob`), answering raw request bodies as the server would.
final class RoutedStorage {
    let subject: StorageUnderTest
    let router: SyncRouter

    init(_ backend: StorageBackend, maximumBatchSize: Int = ProtocolLimits.maximumMutationsPerPush) throws {
        subject = try StorageUnderTest(backend)
        var users = UserDirectory()
        try users.add(token: "t-alice", user: "alice")
        try users.add(token: "t-bob", user: "bob")
        router = SyncRouter(storage: subject.storage, users: users, maximumBatchSize: maximumBatchSize)
    }

    /// The answer to a `POST` of `body` to `path` with `token`.
    func post(_ path: String, _ body: [UInt8], token: String = "t-alice") -> HTTPResponse {
        router.respond(to: HTTPRequest(method: "POST", target: path,
                                       headers: [HTTPHeader(name: "Authorization", value: "Bearer \(token)")], body: body))
    }

    /// The answer to a push of `mutations`.
    func push(_ mutations: [Mutation], token: String = "t-alice") -> HTTPResponse {
        post("/v1/sync/push", PushRequestCodec.encode(mutations), token: token)
    }

    /// The results of a push of `mutations` answered 200 (a thrown error otherwise).
    func results(_ mutations: [Mutation], token: String = "t-alice") throws -> [MutationResult] {
        let response = push(mutations, token: token)
        guard response.status == 200 else { throw StorageError.badRequest("push answered \(response.status): \(String(decoding: response.body, as: UTF8.self))") }
        return try PushReplyCodec.decode(response.body, answering: mutations)
    }

    /// The answer to a pull of `kinds` from their start.
    func pull(kinds: [String], limit: Int = 100, token: String = "t-alice") -> HTTPResponse {
        let request = PullRequest(cursors: Dictionary(uniqueKeysWithValues: kinds.map { ($0, PullCursor?.none) }), limit: limit)
        return post("/v1/sync/pull", PullRequestCodec.encode(request), token: token)
    }

    /// The rows of a pull of `kinds` from their start (a thrown error unless 200).
    func rows(kinds: [String] = ["pin"], token: String = "t-alice") throws -> [ServerRow] {
        let response = pull(kinds: kinds, token: token)
        guard response.status == 200 else { throw StorageError.badRequest("pull answered \(response.status): \(String(decoding: response.body, as: UTF8.self))") }
        return try PullPageCodec.decode(response.body).rows
    }
}
