import SyncJournalProtocol
import SyncJournalWire

/// The protocol's routes (journals/PROTOCOL.md): `POST /v1/sync/push`,
/// `/v1/sync/pull`, `/v1/sync/read`, `/v1/sync/wait` and the membership
/// paths of shared spaces (`/v1/spaces/…`) with a bearer token,
/// `GET /v1/health` without one. Bodies are decoded and replies encoded by `SyncJournalWire`;
/// every error is a JSON `{"error", "message"}` reply. Every reply carries
/// the storage's identity in ``serverIdentityHeader``; a push or pull whose
/// ``serverIdentityHeader`` / ``seenStampHeader`` the storage refuses is
/// answered 409 `server_mismatch`.
///
/// ```swift
/// let router = SyncRouter(storage: storage, users: users, maximumBatchSize: 1_000)
/// let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0), responder: router)
/// ```
public struct SyncRouter: HTTPResponder {
    /// Where rows live.
    public let storage: any SyncStorage
    /// Who may sync.
    public let users: UserDirectory
    /// The most mutations one push may carry (413 `too_large` above).
    public let maximumBatchSize: Int
    /// Where failures the client is not told the details of go (5xx).
    public let log: @Sendable (String) -> Void
    /// The waits for changes held (`POST /v1/sync/wait`); the server wakes
    /// them from the storage's change notifications.
    package let changeWaits: ChangeWaitRegistry
    /// Bounds the large pushes decoded, applied and answered at once.
    package let largeBodies = LargeBodyGate(capacity: SyncRouter.largeBodyBytesAtOnce, threshold: SyncRouter.largeBodyThreshold)

    /// The body bytes of large pushes handled at once: two pushes at the
    /// default body limit (8 MiB). Each costs a few times its body while it
    /// runs, so this bounds what pushes add to the server's memory,
    /// however many arrive together.
    package static let largeBodyBytesAtOnce = 16 << 20
    /// A body from this size on counts as large (1 MiB): smaller pushes never wait.
    package static let largeBodyThreshold = 1 << 20

    /// A router over `storage` for `users`.
    ///
    /// ```swift
    /// let router = SyncRouter(storage: storage, users: users, maximumBatchSize: 500) { print($0) }
    /// ```
    package init(storage: any SyncStorage, users: UserDirectory, maximumBatchSize: Int = ProtocolLimits.maximumMutationsPerPush,
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.storage = storage
        self.users = users
        self.maximumBatchSize = max(1, maximumBatchSize)
        self.log = log
        changeWaits = ChangeWaitRegistry()
    }

    /// A router whose waits for changes are held in `changeWaits`.
    package init(storage: any SyncStorage, users: UserDirectory, maximumBatchSize: Int = 1_000, changeWaits: ChangeWaitRegistry,
                 log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.storage = storage
        self.users = users
        self.maximumBatchSize = max(1, maximumBatchSize)
        self.log = log
        self.changeWaits = changeWaits
    }

    /// The reply to one request.
    ///
    /// ```swift
    /// let response = router.respond(to: HTTPRequest(method: "GET", target: "/v1/health"))
    /// ```
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        Self.adding(identityHeaders, to: route(request))
    }

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        guard let endpoint = SyncEndpoint(rawValue: request.path) else {
            return Self.error(404, .notFound, "no such path: \(request.path.prefix(200))")
        }
        guard request.method == endpoint.method else {
            return Self.error(405, .methodNotAllowed, "\(endpoint.path) takes \(endpoint.method), not \(request.method.prefix(20))",
                              headers: [HTTPHeader(name: "Allow", value: endpoint.method)])
        }
        if endpoint == .health {
            return .json(status: 200, body: HealthReplyCodec.encode())
        }
        guard let user = authenticatedUser(request) else { return Self.unauthorized() }
        do throws(RouteFailure) {
            let members = RowMembers(request)
            switch endpoint {
            case .push:
                return try push(request.body, user: user, members: members, expecting: try Self.expectation(of: request))
            case .pull:
                return try pull(request.body, user: user, members: members, expecting: try Self.expectation(of: request))
            case .read: return try read(request.body, user: user, members: members)
            case .wait: return try waitWithoutParking(request.body, user: user)
            case .health: return .json(status: 200, body: HealthReplyCodec.encode())
            case .createSpace, .renameSpace, .setSpaceMember, .removeSpaceMember, .leaveSpace, .deleteSpace:
                return try changeSpace(request.body, at: endpoint, user: user)
            case .listSpaces: return try listSpaces(request.body, user: user)
            case .attachmentStatus, .uploadAttachment, .downloadAttachment:
                return try attachments(endpoint, request, user: user)
            }
        } catch {
            return reply(to: error, endpoint: endpoint, user: user)
        }
    }

    /// Checks a request's token from its head, before any body byte is
    /// read: a sync request without a known token is answered 401 at once
    /// (and the connection closed, its body unread); one with a token
    /// counts against its user's limits. Health checks and unknown paths
    /// proceed under the shared limits.
    ///
    /// ```swift
    /// router.admit(HTTPRequest(method: "POST", target: "/v1/sync/push"))   // .answer(401)
    /// ```
    public func admit(_ head: HTTPRequest) -> HTTPAdmission {
        guard let endpoint = SyncEndpoint(rawValue: head.path), endpoint != .health, head.method == endpoint.method else {
            return .proceed(owner: nil)
        }
        guard let user = authenticatedUser(head) else {
            var response = Self.adding(identityHeaders, to: Self.unauthorized())
            response.closesConnection = true
            return .answer(response)
        }
        return .proceed(owner: user)
    }

    /// The reply to a request the HTTP layer refused (it closes the connection after).
    ///
    /// ```swift
    /// let response = router.respond(to: .headersTooLarge("101 fields"))   // 431 headers_too_large
    /// ```
    public func respond(to failure: HTTPRequestFailure) -> HTTPResponse {
        // The HTTP layer adds Retry-After to its 503 and 429 answers.
        var response = Self.adding(identityHeaders, to: Self.error(failure.status, ProtocolErrorCode(rawValue: failure.code), failure.message))
        response.closesConnection = true
        return response
    }

    // MARK: Routes

    /// The request header by which a client says which optional row
    /// members it reads (journals/PROTOCOL.md, "Model versions"): a
    /// comma-separated list of member names.
    public static let rowMembersHeader = RowMembersHeader.name

    /// Whether the client reads a row's `modelVersion`: it says so in
    /// ``rowMembersHeader``. A client older than the member would refuse a
    /// reply holding it, so without the header rows go without it.
    static func readsModelVersions(_ request: HTTPRequest) -> Bool {
        RowMembers(request).modelVersion
    }

    private func push(_ body: [UInt8], user: String, members: RowMembers, expecting expectation: ServerExpectation?) throws(RouteFailure) -> HTTPResponse {
        try largeBodies.admitting(bytes: body.count) { () throws(RouteFailure) in
            try pushAdmitted(body, user: user, members: members, expecting: expectation)
        }
    }

    private func pushAdmitted(_ body: [UInt8], user: String, members: RowMembers, expecting expectation: ServerExpectation?) throws(RouteFailure) -> HTTPResponse {
        // A storage that takes fields encoded gets them straight from the
        // body's bytes: a push then costs about its body, not a value per
        // array element (24 bytes or more each where the JSON spent two).
        if let encodedStorage = storage as? any EncodedPushStorage {
            let mutations = try decode { () throws(WireError) in try PushRequestCodec.decodeEncoded(body) }
            if mutations.count > maximumBatchSize {
                throw .tooManyMutations(count: mutations.count, limit: maximumBatchSize)
            }
            try members.requireSpace(namedBy: mutations.lazy.map(\.mutation))
            let results = try store { () throws(StorageError) in try encodedStorage.pushEncoded(user: user, mutations, expecting: expectation) }
            return .json(status: 200, body: PushReplyCodec.encode(encoded: results, includingModelVersions: members.modelVersion))
        }
        let mutations = try decode { () throws(WireError) in try PushRequestCodec.decode(body) }
        if mutations.count > maximumBatchSize {
            throw .tooManyMutations(count: mutations.count, limit: maximumBatchSize)
        }
        try members.requireSpace(namedBy: mutations)
        let results = try store { () throws(StorageError) in try storage.push(user: user, mutations, expecting: expectation) }
        return .json(status: 200, body: PushReplyCodec.encode(results, includingModelVersions: members.modelVersion))
    }

    private func pull(_ body: [UInt8], user: String, members: RowMembers, expecting expectation: ServerExpectation?) throws(RouteFailure) -> HTTPResponse {
        var request = try decode { () throws(WireError) in try PullRequestCodec.decode(body) }
        if request.spaces != nil { try members.requireSpace(for: "$.spaces") }
        request.expectation = expectation
        let page = try store { () throws(StorageError) in try storage.pull(user: user, request) }
        // Without `spaces` the page holds the personal space alone, and a client of then reads no space members.
        return .json(status: 200, body: PullPageCodec.encode(page, includingModelVersions: members.modelVersion, includingSpaces: request.spaces != nil))
    }

    private func read(_ body: [UInt8], user: String, members: RowMembers) throws(RouteFailure) -> HTTPResponse {
        let request = try decode { () throws(WireError) in try ReadRequestCodec.decode(body) }
        if !request.space.isPersonal { try members.requireSpace(for: "$.space") }
        // A space the caller is not a member of reads as no row, exactly as a record that does not exist.
        let row = try store { () throws(StorageError) in try storage.read(user: user, RecordKey(kind: request.kind, id: request.id, space: request.space)) }
        return .json(status: 200, body: ReadReplyCodec.encode(row, includingModelVersions: members.modelVersion))
    }

    // MARK: Failures

    enum RouteFailure: Error {
        case wire(WireError)
        case storage(StorageError)
        case tooManyMutations(count: Int, limit: Int)
        /// A request header that does not parse: 400 `bad_request` naming it.
        case badHeader(String)
        /// A request naming a shared space (at the JSON path) without
        /// `Sync-Row-Members: space`: 400 `bad_request`.
        case spaceNotRead(path: String)
    }

    func decode<T>(_ work: () throws(WireError) -> T) throws(RouteFailure) -> T {
        do throws(WireError) { return try work() } catch { throw .wire(error) }
    }

    func store<T>(_ work: () throws(StorageError) -> T) throws(RouteFailure) -> T {
        do throws(StorageError) { return try work() } catch { throw .storage(error) }
    }

    func reply(to failure: RouteFailure, endpoint: SyncEndpoint, user: String) -> HTTPResponse {
        switch failure {
        case .wire(let error):
            return Self.error(error.errorCode == .tooLarge ? 413 : 400, error.errorCode, error.description)
        case .tooManyMutations(let count, let limit):
            return Self.error(413, .tooLarge, "\(count) mutations, at most \(limit) per push")
        case .badHeader(let reason):
            return Self.error(400, .badRequest, reason)
        case .spaceNotRead(let path):
            return Self.error(400, .badRequest, "\(path) names a shared space, so the request must say that it reads rows' space: "
                              + "send the header \(RowMembersHeader.name): \(RowMembersHeader.space)")
        case .storage(let error):
            switch error {
            case .badCursor:
                return Self.error(400, .badCursor, error.description)
            case .badRequest(let reason):
                return Self.error(400, .badRequest, reason)
            case .cursorExpired(let kinds, let spaceKinds):
                // `spaceKinds` only when a shared space's cursor expired: a client that pulls no spaces never sees the member.
                return .json(status: 410, body: ErrorBodyCodec.encode(ErrorBody(
                    code: .cursorExpired, message: "deletions were purged after these cursors; re-pull with resync", kinds: kinds,
                    spaceKinds: spaceKinds.isEmpty ? nil : spaceKinds)))
            case .serverMismatch(let mismatch):
                return .json(status: 409, body: ErrorBodyCodec.encode(ErrorBody(mismatch: mismatch)))
            case .unavailable(let reason):
                log("sync-server: \(endpoint.path) for \(user): \(reason)")
                return Self.error(503, .unavailable, "the database is busy; retry", headers: [HTTPHeader(name: "Retry-After", value: "1")])
            case .sqlite(let sqlite):
                log("sync-server: \(endpoint.path) for \(user): \(sqlite)")
                return Self.error(500, .internal, "storage failure (sqlite code \(sqlite.code)); nothing of the request was applied")
            case .postgres(let postgres):
                log("sync-server: \(endpoint.path) for \(user): \(postgres)")
                return Self.error(500, .internal, "storage failure (sqlstate \(postgres.sqlState ?? "none")); nothing of the request was applied")
            case .corrupt:
                log("sync-server: \(endpoint.path) for \(user): \(error)")
                return Self.error(500, .internal, "stored data could not be read")
            case .spaceRefused(let refusal):
                return .json(status: refusal.httpStatus, body: ErrorBodyCodec.encode(ErrorBody(refusal: refusal)))
            case .attachmentRefused(let refusal):
                return .json(status: refusal.httpStatus, body: ErrorBodyCodec.encode(ErrorBody(refusal: refusal)))
            case .attachmentFile(let failure):
                log("sync-server: \(endpoint.path) for \(user): \(failure)")
                return Self.error(500, .internal, "attachment store failure (\(failure.operation)); nothing of the request was kept")
            }
        }
    }

    /// The user of a request's `Authorization: Bearer TOKEN`, if the token is known.
    func authenticatedUser(_ request: HTTPRequest) -> String? {
        let values = request.headers.filter { $0.hasName("authorization") }
        guard values.count == 1, let value = values.first?.value else { return nil }
        let parts = value.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return users.user(forToken: String(parts[1]))
    }

    static func unauthorized() -> HTTPResponse {
        error(401, .unauthorized, "a valid Authorization: Bearer TOKEN header is needed",
              headers: [HTTPHeader(name: "WWW-Authenticate", value: "Bearer")])
    }

    static func error(_ status: Int, _ code: ProtocolErrorCode, _ message: String, headers: [HTTPHeader] = []) -> HTTPResponse {
        .json(status: status, body: ErrorBodyCodec.encode(ErrorBody(code: code, message: message)), headers: headers)
    }
}
