import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SyncJournalProtocol
import SyncJournalWire

/// A ``SyncTransport`` that speaks `journals/PROTOCOL.md` over HTTP with
/// `URLSession`: `push`, `pull` and `read` post JSON to `/v1/sync/push`,
/// `/v1/sync/pull` and `/v1/sync/read` under ``baseURL`` with a bearer token.
///
/// Failures are classified as the protocol's error table says: no network
/// (no route, DNS) is ``TransportError/offline``; a refused connection or a
/// timeout is ``TransportError/serverUnreachable(reason:)``; a 401 that a
/// fresh token from the token provider does not cure is
/// ``TransportError/unauthorized(reason:)``; a dropped connection, a 408,
/// a 5xx or 429 (with its
/// `Retry-After` seconds), or a 200 whose body does not decode is
/// ``TransportError/transient(reason:retryAfter:)`` and nothing
/// of it is returned; 410 `cursor_expired` is
/// ``TransportError/cursorExpired(kinds:)``; 413 is
/// ``TransportError/tooLarge(reason:)``; any other 4xx is
/// ``TransportError/permanent(reason:)``. Redirects are not followed (the
/// token must not travel to another origin): a 3xx is permanent.
///
/// ```swift
/// let transport = HTTPTransport(baseURL: URL(string: "https://sync.example.com")!,
///                               token: "device-token", timeout: .seconds(30))
/// let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"]))
/// ```
///
/// ``waitForChanges(after:timeout:)`` long-polls `POST /v1/sync/wait`: the
/// server holds the request until this user has rows after the cursors
/// (``ChangeWaitResult/changed``; the engine pulls next) or the timeout
/// passes (``ChangeWaitResult/timedOut``). Each wait gets a connection of
/// its own, so pushes and pulls never queue behind it; a server older than
/// the wait endpoint (404 or 405) answers ``ChangeWaitResult/notSupported``,
/// and the engine relies on ``SyncEngine/Options/idlePullInterval``.
///
/// Shared spaces (journals/PROTOCOL.md, "Spaces"): mutations and reads
/// carry their `space`, pulls and waits the ``PullRequest/spaces`` they
/// follow, each such request with `Sync-Row-Members: modelVersion, space`;
/// ``change(_:)`` and ``spaces()`` post to `/v1/spaces/…`, and a refusal is
/// ``TransportError/spaceRefused(_:)``. A server from before spaces is
/// recognised by its refusal of the members, and served the personal
/// space alone from then on.
public final class HTTPTransport: SyncTransport, Sendable {
    /// The server's root; the protocol's paths are appended to it.
    public let baseURL: URL
    /// How long one request may take from sending to the last byte of its reply.
    package let timeout: Duration
    /// The longest reply body accepted (a longer one is a transient error).
    package let maximumReplyBytes: Int

    private let tokens: BearerTokenSource
    private let session: URLSession
    /// The session waits for changes run in: its timeouts are long enough
    /// for any wait (each wait keeps its own deadline), and its connections
    /// are not the ones pushes and pulls use.
    private let waitSession: URLSession
    let parser: JSONParser
    /// Set once the server refused a mutation's `queuedAt` as an unknown
    /// member (a server older than it): pushes leave it out from then on.
    private let queuedAtSupport = OptionalMemberSupport()
    /// The same for a mutation's `modelVersion`.
    private let modelVersionSupport = OptionalMemberSupport()
    /// Set once the server refused a pull's or wait's `spaces`, or a
    /// mutation's or read's `space`, as an unknown member (a server from
    /// before spaces): pulls and waits cover the personal space alone from
    /// then on, and nothing of a shared space is sent.
    let spaceSupport = OptionalMemberSupport()

    /// How much longer than its timeout a wait for changes may take before
    /// the transport gives up on the reply (the server answers when its
    /// timeout passes; this covers the trip).
    public static let changeWaitMargin: Duration = .seconds(5)

    /// The request header naming the optional row members this client
    /// reads (journals/PROTOCOL.md, "Model versions").
    package static let rowMembersHeader = RowMembersHeader.name

    /// The default cap on reply bodies: 32 MiB.
    public static let defaultMaximumReplyBytes = 32 << 20

    /// Creates a transport with its own `URLSession` (no cookies, no cache,
    /// no redirects).
    ///
    /// - Parameters:
    ///   - baseURL: the server's root, such as `https://sync.example.com` or `http://127.0.0.1:8080/api`.
    ///   - token: the bearer token sent with every request.
    ///   - timeout: the limit on each request, from sending to the whole reply.
    ///   - maximumReplyBytes: the longest reply body accepted.
    public convenience init(baseURL: URL, token: String, timeout: Duration = .seconds(30),
                            maximumReplyBytes: Int = HTTPTransport.defaultMaximumReplyBytes) {
        self.init(baseURL: baseURL, tokenProvider: { token }, timeout: timeout, maximumReplyBytes: maximumReplyBytes)
    }

    /// Creates a transport whose bearer token comes from `tokenProvider`:
    /// asked before the first request, and once more when the server
    /// refuses the token (401), after which the refused request is sent
    /// again, once. A second 401, or a provider that throws, is
    /// ``TransportError/unauthorized(reason:)``: the engine pauses until the
    /// app signs in and calls ``SyncEngine/resumeAfterAuthentication()``.
    ///
    /// ```swift
    /// let transport = HTTPTransport(baseURL: URL(string: "https://sync.example.com")!) {
    ///     try await session.freshAccessToken()
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - baseURL: the server's root.
    ///   - tokenProvider: returns a current bearer token (say, refreshing an OAuth access token).
    ///   - timeout: the limit on each request, from sending to the whole reply.
    ///   - maximumReplyBytes: the longest reply body accepted.
    public init(baseURL: URL, tokenProvider: @escaping @Sendable () async throws -> String, timeout: Duration = .seconds(30),
                maximumReplyBytes: Int = HTTPTransport.defaultMaximumReplyBytes) {
        self.baseURL = baseURL
        self.tokens = BearerTokenSource(tokenProvider)
        self.timeout = timeout
        self.maximumReplyBytes = maximumReplyBytes
        self.parser = JSONParser(maximumByteCount: maximumReplyBytes)
        let configuration = URLSessionConfiguration.ephemeral
        // The transport keeps its own deadline (DataTaskCall); the session's,
        // which Linux truncates to whole seconds, is only a looser backstop.
        configuration.timeoutIntervalForRequest = Self.backstop(timeout)
        configuration.timeoutIntervalForResource = Self.backstop(timeout)
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.session = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
        let waits = URLSessionConfiguration.ephemeral
        // Each wait keeps its own deadline (its timeout plus the margin); these are only backstops.
        waits.timeoutIntervalForRequest = Self.longestWait
        waits.timeoutIntervalForResource = Self.longestWait
        waits.httpCookieAcceptPolicy = .never
        waits.httpShouldSetCookies = false
        waits.urlCache = nil
        waits.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.waitSession = URLSession(configuration: waits, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    /// The session-level backstop of waits for changes: a day.
    private static let longestWait: TimeInterval = 86_400

    private static func backstop(_ timeout: Duration) -> TimeInterval { timeout.timeInterval.rounded(.up) + 5 }

    deinit {
        session.finishTasksAndInvalidate()
        waitSession.invalidateAndCancel()
    }

    // MARK: SyncTransport

    /// Posts `mutations` to `/v1/sync/push` and returns one result per
    /// mutation, checked to answer them in order.
    ///
    /// Each mutation's `queuedAt` goes along, so a server that forgets
    /// operation ids can tell an old resend, and its `modelVersion`, so the
    /// server keeps the highest version that wrote each record; a server
    /// older than either member refuses it (400, nothing applied), and the
    /// push is sent again without it, as are later ones.
    public func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        try await push(mutations, expecting: nil)
    }

    /// Sends `mutations` to `POST /v1/sync/push` with the device's
    /// expectation in `Sync-Server-Identity` and `Sync-Seen-Stamp` (none
    /// without one): a server that is not that one, or is behind it,
    /// answers 409 `server_mismatch`, thrown as
    /// ``TransportError/serverMismatch(_:)``, having applied nothing. A
    /// server from before identities ignores the headers.
    ///
    /// ```swift
    /// let results = try await transport.push(mutations, expecting: ServerExpectation(identity: known, seenStamp: seen))
    /// ```
    ///
    /// A mutation into a shared space goes with its `space` (and the request
    /// says it reads rows' `space`). A server from before spaces refuses the
    /// member (400, nothing applied): from then on each such mutation is
    /// answered here, `rejected` permanently as the server has no shared
    /// spaces, and the others are pushed without them.
    public func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        if !spaceSupport.isAssumed && mutations.contains(where: { !$0.space.isPersonal }) {
            return try await pushRejectingShared(mutations, expecting: expectation)
        }
        var withQueuedAt = queuedAtSupport.isAssumed && mutations.contains { $0.queuedAt != nil }
        var withModelVersion = modelVersionSupport.isAssumed && mutations.contains { $0.modelVersion != nil }
        var reply: [UInt8] = []
        // At most one retry per member the server may not know.
        while true {
            let body = PushRequestCodec.encode(mutations, includingQueuedAt: withQueuedAt, includingModelVersion: withModelVersion)
            do {
                reply = try await send(.push, body: body, pulledKinds: [], expectation: expectation,
                                       namesSpace: mutations.contains { !$0.space.isPersonal }).body
                break
            } catch {
                guard case .permanent(let reason) = error else { throw error }
                if Self.refuses(reason, member: "].space"), mutations.contains(where: { !$0.space.isPersonal }) {
                    spaceSupport.markRefused()
                    return try await pushRejectingShared(mutations, expecting: expectation)
                } else if withQueuedAt, reason.contains(".queuedAt is not a member") {
                    queuedAtSupport.markRefused()
                    withQueuedAt = false
                } else if withModelVersion, reason.contains(".modelVersion is not a member") {
                    modelVersionSupport.markRefused()
                    withModelVersion = false
                } else {
                    throw error
                }
            }
        }
        do {
            return try PushReplyCodec.decode(reply, answering: mutations, parser: parser)
        } catch {
            throw Self.malformed(.push, error)
        }
    }

    /// Posts `request` to `/v1/sync/pull` and returns the page. A limit over
    /// the protocol's 10,000 is sent as 10,000 (a smaller page is always
    /// allowed; a larger limit would be refused with 400).
    ///
    /// A request with ``PullRequest/spaces`` sends them (and says it reads
    /// rows' `space`); the reply then carries the spaces' cursors,
    /// descriptions and lost spaces. A server from before spaces refuses
    /// `spaces` as an unknown member (400 `bad_request`): the pull is sent
    /// again without them, as are later ones, and covers the personal space
    /// alone (a page with no space data).
    public func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        var request = request
        request.limit = min(max(request.limit, 1), PullRequestCodec.maximumLimit)
        if !spaceSupport.isAssumed { request.spaces = nil }
        let reply: HTTPReply
        do {
            reply = try await send(.pull, body: PullRequestCodec.encode(request), pulledKinds: request.cursors.keys.sorted(),
                                   expectation: request.expectation, namesSpace: request.spaces != nil)
        } catch {
            guard request.spaces != nil, case .permanent(let reason) = error, Self.refuses(reason, member: "$.spaces") else { throw error }
            spaceSupport.markRefused()
            request.spaces = nil
            return try await pull(request)
        }
        do {
            var page = try PullPageCodec.decode(reply.body, namingSpaces: request.spaces != nil, parser: parser)
            page.server = reply.server
            return page
        } catch {
            throw Self.malformed(.pull, error)
        }
    }

    /// Posts `{"kind", "id"}` to `/v1/sync/read` and returns the row (`nil`: no live row of this user).
    public func read(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        try await read(ReadRequest(kind: kind, id: id))
    }

    /// Posts `request` to `/v1/sync/read` (with `Sync-Row-Members: space`
    /// for a shared space's record) and returns the row.
    func read(_ request: ReadRequest) async throws(TransportError) -> ServerRow? {
        let reply = try await send(.read, body: ReadRequestCodec.encode(request), pulledKinds: [],
                                   namesSpace: !request.space.isPersonal).body
        do {
            return try ReadReplyCodec.decode(reply, parser: parser)
        } catch {
            throw Self.malformed(.read, error)
        }
    }

    /// Asks `GET /v1/health` (no token) whether the server is up: returns
    /// when it answers 200 `{"status": "ok"}`, throws as ``push(_:)`` would
    /// otherwise (``TransportError/offline`` when it cannot be reached).
    ///
    /// ```swift
    /// do { try await transport.checkHealth(); await engine.setOnline(true) } catch { /* still down */ }
    /// ```
    public func checkHealth() async throws(TransportError) {
        let reply = try await send(.health, body: nil, pulledKinds: []).body
        let status: String
        do {
            status = try HealthReplyCodec.decode(reply, parser: parser)
        } catch {
            throw Self.malformed(.health, error)
        }
        if status != HealthReplyCodec.ok {
            throw .transient(reason: "the server reports status \"\(status)\"", retryAfter: nil)
        }
    }

    // MARK: Requests

    static func malformed(_ endpoint: SyncEndpoint, _ error: WireError) -> TransportError {
        // The server may have applied a push: its operation ids make the resend safe.
        .transient(reason: "malformed reply to \(endpoint.path): \(error)", retryAfter: nil)
    }

    /// The URL of `endpoint` under ``baseURL``.
    package func url(of endpoint: SyncEndpoint) -> URL {
        url(of: endpoint.path)
    }

    /// The URL of `path` under ``baseURL``.
    private func url(of path: String) -> URL {
        path.split(separator: "/").reduce(baseURL) { $0.appendingPathComponent(String($1)) }
    }

    /// Whether a permanent error's `reason` is a 400 refusing `member` as
    /// unknown (the words of a server older than the member): the path of
    /// the member ends with `member`.
    static func refuses(_ reason: String, member: String) -> Bool {
        reason.contains("HTTP 400 ") && reason.contains("\(member) is not a member")
    }

    /// Sends one request and returns a 200 reply (or one whose status is in
    /// `passing`). A 401 to a request with a token gets one retry with a
    /// fresh token from the provider (none when the provider hands back the
    /// refused token). `namesSpace` says that the request names a shared
    /// space, so it says it reads rows' `space` (journals/PROTOCOL.md, "Membership").
    func send(_ endpoint: SyncEndpoint, body: [UInt8]?, pulledKinds: [String], passing: Set<Int> = [],
              deadline: Duration? = nil, in session: URLSession? = nil,
              expectation: ServerExpectation? = nil, namesSpace: Bool = false,
              exchange headers: HeaderExchange? = nil) async throws(TransportError) -> HTTPReply {
        guard body != nil else {
            return try await send(endpoint, body: body, token: nil, pulledKinds: pulledKinds, passing: passing, deadline: deadline, in: session,
                                  expectation: expectation, namesSpace: namesSpace, exchange: headers)
        }
        let token = try await bearerToken { () async throws -> String in try await self.tokens.token() }
        do {
            return try await send(endpoint, body: body, token: token, pulledKinds: pulledKinds, passing: passing, deadline: deadline, in: session,
                                  expectation: expectation, namesSpace: namesSpace, exchange: headers)
        } catch {
            guard case .unauthorized(let reason) = error else { throw error }
            let fresh = try await bearerToken { () async throws -> String in try await self.tokens.refresh(rejected: token) }
            if fresh == token { throw .unauthorized(reason: reason) }
            return try await send(endpoint, body: body, token: fresh, pulledKinds: pulledKinds, passing: passing, deadline: deadline, in: session,
                                  expectation: expectation, namesSpace: namesSpace, exchange: headers)
        }
    }

    /// A token from the source; a provider that fails means the app must sign in.
    private func bearerToken(_ read: @Sendable () async throws -> String) async throws(TransportError) -> String {
        do { return try await read() } catch {
            throw .unauthorized(reason: "no bearer token: \(error)")
        }
    }

    /// Posts `{"cursors", "timeoutMs"}` to `/v1/sync/wait` and waits for the
    /// answer: ``ChangeWaitResult/changed`` when this user has rows after
    /// `cursors` (at once if it has already), ``ChangeWaitResult/timedOut``
    /// when the server's timeout passed first (the server holds a wait at
    /// most its own cap, 60 s for `sync-server` by default, whatever
    /// `timeout` asks). The request may take `timeout` plus
    /// ``changeWaitMargin``; a server older than the endpoint (404, 405)
    /// answers ``ChangeWaitResult/notSupported``. Other failures are
    /// classified as for ``pull(_:)``. Cancelling the calling task cancels the request.
    ///
    /// ```swift
    /// switch try await transport.waitForChanges(after: ["pin": cursor], timeout: .seconds(30)) {
    /// case .changed: try await pullEverything()
    /// case .timedOut, .notSupported: break
    /// }
    /// ```
    public func waitForChanges(after cursors: [String: PullCursor?], timeout: Duration) async throws(TransportError) -> ChangeWaitResult {
        try await waitForChanges(after: cursors, spaces: nil, timeout: timeout)
    }

    /// Waits as ``waitForChanges(after:timeout:)`` does, naming the shared
    /// spaces `spaces` holds as a pull does (`nil`: the personal space
    /// alone): a push into any space the user is a member of, or a change
    /// to the user's memberships, ends the wait. A server from before
    /// spaces refuses `spaces` (400 `bad_request` naming it): the wait is
    /// sent again without them, as are later waits and pulls.
    ///
    /// ```swift
    /// let result = try await transport.waitForChanges(after: ["pin": cursor], spaces: [trip: held], timeout: .seconds(30))
    /// ```
    public func waitForChanges(after cursors: [String: PullCursor?], spaces: [SpaceID: SpaceCursors]?,
                               timeout: Duration) async throws(TransportError) -> ChangeWaitResult {
        let milliseconds = max(0, Self.wholeMilliseconds(timeout))
        let spaces = spaceSupport.isAssumed ? spaces : nil
        let body = ChangeWaitRequestCodec.encode(ChangeWaitRequest(cursors: cursors, timeoutMilliseconds: milliseconds, spaces: spaces))
        let reply: HTTPReply
        do {
            // 404 and 405: a server older than the endpoint.
            reply = try await send(.wait, body: body, pulledKinds: [], passing: [404, 405],
                                   deadline: timeout + Self.changeWaitMargin, in: waitSession, namesSpace: spaces != nil)
        } catch {
            guard spaces != nil, case .permanent(let reason) = error, Self.refuses(reason, member: "$.spaces") else { throw error }
            spaceSupport.markRefused()
            return try await waitForChanges(after: cursors, spaces: nil, timeout: timeout)
        }
        if reply.status != 200 { return .notSupported }
        do {
            return try ChangeWaitReplyCodec.decode(reply.body, parser: parser) ? .changed : .timedOut
        } catch {
            throw Self.malformed(.wait, error)
        }
    }

    /// `duration` in whole milliseconds, rounded down, saturating.
    private static func wholeMilliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        if overflow { return seconds > 0 ? .max : .min }
        let (sum, overflowSum) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflowSum ? .max : sum
    }

    /// Sends one request (a POST with `body` and `token`, or a GET without
    /// either) and returns a 200 reply, or one with a status in `passing`;
    /// anything else is classified. `deadline` replaces the transport's
    /// timeout, `session` its session.
    private func send(_ endpoint: SyncEndpoint, body: [UInt8]?, token: String?, pulledKinds: [String], passing: Set<Int>,
                      deadline: Duration?, in session: URLSession?, expectation: ServerExpectation?,
                      namesSpace: Bool, exchange headers: HeaderExchange?) async throws(TransportError) -> HTTPReply {
        let timeout = deadline ?? self.timeout
        let session = session ?? self.session
        var request = URLRequest(url: url(of: endpoint.path), cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: Self.backstop(timeout))
        request.httpMethod = endpoint.method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body, let token {
            // A token with a line break could smuggle headers; only visible ASCII travels.
            guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw .permanent(reason: "the bearer token is empty or holds characters other than visible ASCII")
            }
            request.httpBody = Data(body)
            request.setValue(headers?.bytesBody == true ? "application/octet-stream" : "application/json", forHTTPHeaderField: "Content-Type")
            for (name, value) in headers?.sent ?? [] { request.setValue(value, forHTTPHeaderField: name) }
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            // Rows in the reply may carry their model version: a server
            // sends it only to a client that says it reads it. A request
            // naming a shared space must say it reads rows' space as well.
            let members = namesSpace ? [RowMembersHeader.modelVersion, RowMembersHeader.space] : [RowMembersHeader.modelVersion]
            request.setValue(RowMembersHeader.value(naming: members), forHTTPHeaderField: Self.rowMembersHeader)
        }
        // Only a device that knows its server says which; identities and stamps are plain ASCII.
        if let expectation {
            for (name, value) in ServerIdentityHeaders.headers(for: expectation) { request.setValue(value, forHTTPHeaderField: name) }
        }

        let exchange = await DataTaskCall.run(request, in: session, timeout: timeout)
        let response: HTTPURLResponse
        let data: Data
        switch exchange {
        case .failed(let error): throw TransportErrorClassifier.classify(error)
        case .cancelled: throw .transient(reason: "cancelled while waiting for \(endpoint.path)", retryAfter: nil)
        case .timedOut: throw .serverUnreachable(reason: "no reply from \(endpoint.path) within \(timeout)")
        case .completed(let reply, let replyData):
            guard let http = reply as? HTTPURLResponse else {
                throw .transient(reason: "not an HTTP reply from \(endpoint.path)", retryAfter: nil)
            }
            response = http
            data = replyData
        }
        if data.count > maximumReplyBytes {
            throw .transient(reason: "a reply of \(data.count) bytes from \(endpoint.path), at most \(maximumReplyBytes)", retryAfter: nil)
        }
        let bytes = [UInt8](data)
        if response.statusCode == 200 || passing.contains(response.statusCode) {
            // A server from before identities sends none: nil, and it works as before.
            var reply = HTTPReply(status: response.statusCode, body: bytes,
                                  server: ServerIdentityHeaders.identity(in: response.header(ServerIdentityHeaders.identity)))
            for name in headers?.kept ?? [] { reply.headers[name] = response.header(name) }
            return reply
        }
        throw TransportErrorClassifier.classify(status: response.statusCode,
                                                retryAfter: response.header("Retry-After"),
                                                body: bytes, endpoint: endpoint, pulledKinds: pulledKinds)
    }
}
