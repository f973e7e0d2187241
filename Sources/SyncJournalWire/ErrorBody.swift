import SyncJournalProtocol

/// The body of every error reply: `{"error": CODE, "message": TEXT}`, plus
/// `kinds` and `spaceKinds` for `cursor_expired`, `expected`, `found`,
/// `seenStamp`, `latestStamp` for `server_mismatch` (see ``init(mismatch:)``),
/// and `space`, `role`, `user` for a refused membership request (see
/// ``init(refusal:)``).
///
/// ```swift
/// let body = ErrorBodyCodec.encode(ErrorBody(code: .cursorExpired, message: "pull again from the start", kinds: ["pin"]))
/// ```
public struct ErrorBody: Sendable, Hashable {
    /// The machine-readable code.
    public var code: ProtocolErrorCode
    /// A human-readable explanation.
    public var message: String
    /// The kinds whose cursors expired (`cursor_expired` only), else `nil`.
    public var kinds: [String]?
    /// The identity the request expected (`server_mismatch` with another server), else `nil`.
    public var expected: ServerIdentity?
    /// The identity the server has (`server_mismatch`), else `nil`.
    public var found: ServerIdentity?
    /// The stamp the request said the device had seen (`server_mismatch` behind it), else `nil`.
    public var seenStamp: Int64?
    /// The server's latest stamp for the user (`server_mismatch` behind the device), else `nil`.
    public var latestStamp: Int64?
    /// Per shared space, the kinds whose cursors expired (`cursor_expired`
    /// only; the personal space's are ``kinds``), else `nil`.
    public var spaceKinds: [SpaceID: [String]]?
    /// The space a membership refusal is about, else `nil`.
    public var space: SpaceID?
    /// The caller's role in ``space`` (`forbidden`), else `nil`.
    public var role: SpaceRole?
    /// The user the server does not know (`unknown_user`), else `nil`.
    public var user: String?
    /// With `wrong_offset`: where the server's copy of an upload ends.
    public var received: Int64?

    /// Creates an error body.
    public init(code: ProtocolErrorCode, message: String, kinds: [String]? = nil, expected: ServerIdentity? = nil,
                found: ServerIdentity? = nil, seenStamp: Int64? = nil, latestStamp: Int64? = nil,
                spaceKinds: [SpaceID: [String]]? = nil, space: SpaceID? = nil, role: SpaceRole? = nil, user: String? = nil,
                received: Int64? = nil) {
        self.code = code
        self.message = message
        self.kinds = kinds
        self.expected = expected
        self.found = found
        self.seenStamp = seenStamp
        self.latestStamp = latestStamp
        self.spaceKinds = spaceKinds
        self.space = space
        self.role = role
        self.user = user
        self.received = received
    }

    /// The body a server answers a request that does not decode with
    /// (status ``WireError/httpStatus``).
    ///
    /// ```swift
    /// catch let error { reply(status: error.httpStatus, body: ErrorBodyCodec.encode(ErrorBody(error))) }
    /// ```
    public init(_ error: WireError) {
        self.init(code: error.errorCode, message: error.description)
    }
}
