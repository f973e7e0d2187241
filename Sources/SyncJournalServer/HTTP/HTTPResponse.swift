/// One HTTP response: a status, header fields and a body. The server adds
/// `Content-Length` and `Connection` itself.
///
/// ```swift
/// let response = HTTPResponse(status: 200, headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
///                             body: Array(#"{"status":"ok"}"#.utf8))
/// ```
public struct HTTPResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// Header fields other than `Content-Length` and `Connection`.
    public var headers: [HTTPHeader]
    /// The body.
    public var body: [UInt8]
    /// Whether the server closes the connection after this response (after
    /// an error that leaves the byte stream's framing in doubt).
    public var closesConnection: Bool

    /// Creates a response.
    ///
    /// ```swift
    /// let notFound = HTTPResponse(status: 404, body: Array("{}".utf8))
    /// ```
    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = [], closesConnection: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.closesConnection = closesConnection
    }

    /// A JSON response (`Content-Type: application/json`).
    ///
    /// ```swift
    /// let ok = HTTPResponse.json(status: 200, body: Array(#"{"status":"ok"}"#.utf8))
    /// ```
    public static func json(status: Int, body: [UInt8], headers: [HTTPHeader] = [], closesConnection: Bool = false) -> HTTPResponse {
        HTTPResponse(status: status, headers: [HTTPHeader(name: "Content-Type", value: "application/json")] + headers,
                     body: body, closesConnection: closesConnection)
    }

    /// The response's bytes on the wire, with `Content-Length` and `Connection` added.
    ///
    /// ```swift
    /// let bytes = response.serialized(closing: true)
    /// ```
    public func serialized(closing: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for header in headers { head += "\(header.name): \(header.value)\r\n" }
        head += "Content-Length: \(body.count)\r\n"
        head += closing ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// The reason phrase for `status` (informative only; clients read the code).
    ///
    /// ```swift
    /// HTTPResponse.reasonPhrase(431)   // "Request Header Fields Too Large"
    /// ```
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 422: return "Unprocessable Content"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status"
        }
    }
}
