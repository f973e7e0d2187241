/// The body of every error reply: `{"error": CODE, "message": TEXT}`, plus
/// `kinds` for `cursor_expired`.
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

    /// Creates an error body.
    public init(code: ProtocolErrorCode, message: String, kinds: [String]? = nil) {
        self.code = code
        self.message = message
        self.kinds = kinds
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
