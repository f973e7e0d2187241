/// One parsed HTTP/1.1 request with its whole body.
///
/// ```swift
/// if request.method == "POST", request.path == "/v1/sync/push" { … }
/// let token = request.header("authorization")
/// ```
public struct HTTPRequest: Sendable, Hashable {
    /// The method, as sent (`GET`, `POST`; methods are case-sensitive).
    public var method: String
    /// The request target, path and query (`/v1/sync/pull?x=1`).
    public var target: String
    /// `true` for HTTP/1.0, whose connections close unless asked to stay open.
    public var isHTTP10: Bool
    /// The header fields in arrival order (names as sent).
    public var headers: [HTTPHeader]
    /// The body (exactly `Content-Length` bytes).
    public var body: [UInt8]

    /// Creates a request (the server's parser does this; tests may too).
    ///
    /// ```swift
    /// let request = HTTPRequest(method: "GET", target: "/v1/health", headers: [HTTPHeader(name: "Host", value: "x")])
    /// ```
    public init(method: String, target: String, isHTTP10: Bool = false, headers: [HTTPHeader] = [], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.isHTTP10 = isHTTP10
        self.headers = headers
        self.body = body
    }

    /// The target without its query.
    ///
    /// ```swift
    /// HTTPRequest(method: "GET", target: "/v1/health?verbose").path   // "/v1/health"
    /// ```
    public var path: String {
        guard let question = target.firstIndex(of: "?") else { return target }
        return String(target[..<question])
    }

    /// The value of the first header named `name` (compared case-insensitively), if any.
    ///
    /// ```swift
    /// let type = request.header("content-type")
    /// ```
    public func header(_ name: String) -> String? {
        headers.first { $0.hasName(name) }?.value
    }

    /// Whether the client asked to close the connection after this request
    /// (`Connection: close`, or HTTP/1.0 without `Connection: keep-alive`).
    ///
    /// ```swift
    /// if request.wantsClose { /* answer with Connection: close */ }
    /// ```
    public var wantsClose: Bool {
        let options = headers.filter { $0.hasName("connection") }
            .flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingSpaces.lowercased() }
        if options.contains("close") { return true }
        return isHTTP10 && !options.contains("keep-alive")
    }
}
