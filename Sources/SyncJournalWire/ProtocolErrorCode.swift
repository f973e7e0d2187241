/// The `error` member of an error reply (`journals/PROTOCOL.md`, "Errors").
/// Codes the protocol does not list are kept as they came, so a newer
/// server's code still reaches the message.
///
/// ```swift
/// let body = ErrorBody(code: .cursorExpired, message: "pin cursor behind purged tombstones", kinds: ["pin"])
/// ```
public struct ProtocolErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code as it appears on the wire.
    public var rawValue: String

    /// Wraps a code.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// 400: a request of the wrong shape.
    public static let badRequest = ProtocolErrorCode(rawValue: "bad_request")
    /// 400: a body that is not strict JSON.
    public static let badJSON = ProtocolErrorCode(rawValue: "bad_json")
    /// 400: a pull cursor that is not `UPDATEDAT:ID`.
    public static let badCursor = ProtocolErrorCode(rawValue: "bad_cursor")
    /// 401: no token, or an unknown one.
    public static let unauthorized = ProtocolErrorCode(rawValue: "unauthorized")
    /// 404: no such path.
    public static let notFound = ProtocolErrorCode(rawValue: "not_found")
    /// 405: a method the path does not take.
    public static let methodNotAllowed = ProtocolErrorCode(rawValue: "method_not_allowed")
    /// 408: the request did not arrive whole within the server's read timeout.
    public static let requestTimeout = ProtocolErrorCode(rawValue: "request_timeout")
    /// 410: a pull cursor behind purged tombstones (with `kinds`).
    public static let cursorExpired = ProtocolErrorCode(rawValue: "cursor_expired")
    /// 409: the server is not the one the request's `Sync-Server-Identity`
    /// names, or it is behind the request's `Sync-Seen-Stamp`; nothing was applied.
    public static let serverMismatch = ProtocolErrorCode(rawValue: "server_mismatch")
    /// 411: no `Content-Length` (a chunked body).
    public static let lengthRequired = ProtocolErrorCode(rawValue: "length_required")
    /// 413: a body or batch over the server's limit.
    public static let tooLarge = ProtocolErrorCode(rawValue: "too_large")
    /// 429: slow down (with `Retry-After`).
    public static let tooManyRequests = ProtocolErrorCode(rawValue: "too_many_requests")
    /// 414: a request line over the server's limit.
    public static let uriTooLong = ProtocolErrorCode(rawValue: "uri_too_long")
    /// 431: request headers over the server's limit.
    public static let headersTooLarge = ProtocolErrorCode(rawValue: "headers_too_large")
    /// 500: the server failed.
    public static let `internal` = ProtocolErrorCode(rawValue: "internal")
    /// 503: the server is overloaded or going down.
    public static let unavailable = ProtocolErrorCode(rawValue: "unavailable")
    /// 505: an HTTP version the server does not speak.
    public static let httpVersionNotSupported = ProtocolErrorCode(rawValue: "http_version_not_supported")

    /// 404: the caller is not a member of the space named, or it does not
    /// exist (the server never says which), with `space`.
    public static let noSuchSpace = ProtocolErrorCode(rawValue: "no_such_space")
    /// 403: the caller's role in the space does not allow the request, with `space` and `role`.
    public static let forbidden = ProtocolErrorCode(rawValue: "forbidden")
    /// 409: a create named a space id that is taken, with `space`.
    public static let spaceExists = ProtocolErrorCode(rawValue: "space_exists")
    /// 409: the change would leave the space without an owner, with `space`.
    public static let lastOwner = ProtocolErrorCode(rawValue: "last_owner")
    /// 409: a space or a user is at its limit of members or spaces.
    public static let tooMany = ProtocolErrorCode(rawValue: "too_many")
    /// 404: the server's user directory knows no such user, with `user`.
    public static let unknownUser = ProtocolErrorCode(rawValue: "unknown_user")

    /// 409: an upload's offset is not where the server's copy ends, with `received`.
    public static let wrongOffset = ProtocolErrorCode(rawValue: "wrong_offset")
    /// 413: an upload would take the user past their attachment quota.
    public static let quotaExceeded = ProtocolErrorCode(rawValue: "quota_exceeded")
    /// 422: an upload's chunk does not hash to its `Sync-Chunk-SHA256`.
    public static let chunkMismatch = ProtocolErrorCode(rawValue: "chunk_mismatch")
    /// 422: a finished upload does not hash to its content's name.
    public static let contentMismatch = ProtocolErrorCode(rawValue: "content_mismatch")
    /// 404: no such content the caller may read.
    public static let noSuchContent = ProtocolErrorCode(rawValue: "no_such_content")

    /// The raw code.
    public var description: String { rawValue }
}
