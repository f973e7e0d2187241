/// Why the server answers a connection without handing a request to the
/// responder: the bytes are not a request it will take, or arrived too
/// slowly, or the server is full. The server closes the connection after
/// answering each of these.
///
/// ```swift
/// func respond(to failure: HTTPRequestFailure) -> HTTPResponse { errorReply(failure.status, failure.code, failure.message) }
/// ```
public enum HTTPRequestFailure: Error, Sendable, Hashable {
    /// Malformed request line, header or `Content-Length` (400).
    case malformed(String)
    /// A body without `Content-Length`, or with `Transfer-Encoding` (411).
    case lengthRequired(String)
    /// `Content-Length` above the server's body limit (413).
    case bodyTooLarge(length: Int, limit: Int)
    /// The request line is longer than the limit (414).
    case requestLineTooLong(limit: Int)
    /// More header bytes or fields than the limits allow (431).
    case headersTooLarge(String)
    /// An HTTP version other than 1.0 and 1.1 (505).
    case versionNotSupported(String)
    /// The request did not arrive in full within the header or read timeout (408).
    case timeout(milliseconds: Int)
    /// The server holds its maximum of connections (503, `Retry-After`).
    case tooManyConnections(limit: Int)
    /// The server holds its maximum of connections from the client's address (503, `Retry-After`).
    case tooManyConnectionsFromAddress(limit: Int)
    /// The request's owner (its user) has too many requests or body bytes
    /// in flight (429, `Retry-After`).
    case ownerBusy(String)

    /// The status code to answer with.
    ///
    /// ```swift
    /// HTTPRequestFailure.headersTooLarge("65 fields").status   // 431
    /// ```
    public var status: Int {
        switch self {
        case .malformed: return 400
        case .lengthRequired: return 411
        case .bodyTooLarge: return 413
        case .requestLineTooLong: return 414
        case .headersTooLarge: return 431
        case .versionNotSupported: return 505
        case .timeout: return 408
        case .tooManyConnections, .tooManyConnectionsFromAddress: return 503
        case .ownerBusy: return 429
        }
    }

    /// The protocol's error code (journals/PROTOCOL.md, "Errors").
    ///
    /// ```swift
    /// HTTPRequestFailure.bodyTooLarge(length: 9, limit: 8).code   // "too_large"
    /// ```
    public var code: String {
        switch self {
        case .malformed: return "bad_request"
        case .lengthRequired: return "length_required"
        case .bodyTooLarge: return "too_large"
        case .requestLineTooLong: return "uri_too_long"
        case .headersTooLarge: return "headers_too_large"
        case .versionNotSupported: return "http_version_not_supported"
        case .timeout: return "request_timeout"
        case .tooManyConnections, .tooManyConnectionsFromAddress: return "unavailable"
        case .ownerBusy: return "too_many_requests"
        }
    }

    /// A one-line explanation for the reply's `message`.
    ///
    /// ```swift
    /// HTTPRequestFailure.timeout(milliseconds: 10_000).message   // "the request did not arrive within 10000 ms"
    /// ```
    public var message: String {
        switch self {
        case .malformed(let reason): return reason
        case .lengthRequired(let reason): return reason
        case .bodyTooLarge(let length, let limit): return "the body is \(length) bytes, at most \(limit) are taken"
        case .requestLineTooLong(let limit): return "the request line is over \(limit) bytes"
        case .headersTooLarge(let reason): return reason
        case .versionNotSupported(let version): return "\(version) is not supported, only HTTP/1.1 and HTTP/1.0"
        case .timeout(let milliseconds): return "the request did not arrive within \(milliseconds) ms"
        case .tooManyConnections(let limit): return "the server holds its maximum of \(limit) connections"
        case .tooManyConnectionsFromAddress(let limit): return "the server holds its maximum of \(limit) connections from this address"
        case .ownerBusy(let reason): return reason
        }
    }
}
