/// Where the HTTP server listens and the limits that keep one client from
/// hurting the others.
///
/// ```swift
/// var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)   // port 0: any free port
/// configuration.maximumBodyBytes = 1 << 20
/// ```
public struct HTTPServerConfiguration: Sendable, Hashable {
    /// The address to listen on (a name or a numeric IPv4/IPv6 address).
    public var host: String
    /// The port; 0 picks a free one (read it from ``HTTPServer/port``).
    public var port: Int
    /// The longest request line taken (414 above).
    public var maximumRequestLineBytes = 8 * 1024
    /// The most bytes of request line and header fields together (431 above).
    public var maximumHeaderBytes = 32 * 1024
    /// The most header fields (431 above).
    public var maximumHeaderCount = 100
    /// The largest body taken (413 above).
    public var maximumBodyBytes = 8 * 1024 * 1024
    /// How long a request may take to arrive, from its first byte to its
    /// last (408 after): a slow client cannot hold a connection open for ever.
    public var readTimeoutMilliseconds = 10_000
    /// How long an open connection may wait for its next request.
    public var idleTimeoutMilliseconds = 60_000
    /// How long one response may take to be written (the client must read).
    public var writeTimeoutMilliseconds = 10_000
    /// The most connections served at once; more are answered 503 and closed.
    public var maximumConnections = 64
    /// How long ``HTTPServer/shutdown()`` lets requests in flight finish before cutting their connections.
    public var shutdownGraceMilliseconds = 10_000

    /// A configuration for `host` and `port` with the default limits.
    ///
    /// ```swift
    /// let configuration = HTTPServerConfiguration()   // 127.0.0.1:8787
    /// ```
    public init(host: String = "127.0.0.1", port: Int = 8787) {
        self.host = host
        self.port = port
    }
}
