/// Where the HTTP server listens and the limits that keep one client from
/// hurting the others (journals/PROTOCOL.md, "Limits", lists each with its
/// status code).
///
/// ```swift
/// var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)   // port 0: any free port
/// configuration.maximumBodyBytes = 1 << 20
/// configuration.maximumConnectionsPerAddress = 64
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
    /// The most empty lines (CRLF) ignored before a request line, however
    /// they arrive (400 above).
    public var maximumEmptyLines = 8
    /// The largest body taken (413 above).
    public var maximumBodyBytes = 8 * 1024 * 1024
    /// How long a request head may take to arrive, counted from the
    /// connection's start or, on a kept-alive connection, from the first byte
    /// after the previous answer (408 after). Empty lines and trickled bytes
    /// do not extend it.
    public var headerTimeoutMilliseconds = 10_000
    /// How long a whole request (head and body) may take to arrive, from the
    /// same start (408 after): a slow client cannot hold a connection for ever.
    public var readTimeoutMilliseconds = 10_000
    /// How long a kept-alive connection may stay silent between requests
    /// before it is closed (without an answer: there is no request).
    public var idleTimeoutMilliseconds = 60_000
    /// How long one response may take to be written (the client must read);
    /// the connection is cut after.
    public var writeTimeoutMilliseconds = 10_000
    /// The most connections served at once; more are answered 503 with
    /// `Retry-After` and closed. The open-file limit bounds it too: the
    /// server keeps 128 descriptors spare under `RLIMIT_NOFILE`.
    public var maximumConnections = 20_000
    /// The most connections served at once from one peer address; more
    /// from that address are answered 503 with `Retry-After` and closed.
    public var maximumConnectionsPerAddress = 256
    /// Threads that call the responder (which may block, on a database).
    public var workerThreads = 16
    /// The most requests of one user (one owner, see ``HTTPAdmission``)
    /// handed to the responder at once; the next wait their turn, and users
    /// take turns.
    public var maximumConcurrentRequestsPerOwner = 4
    /// The most requests of one owner waiting or running; more are 429.
    public var maximumQueuedRequestsPerOwner = 64
    /// The most body bytes of one owner's requests in flight (declared by
    /// `Content-Length`, from admission until answered); more are 429
    /// with `Retry-After`. Never below ``maximumBodyBytes``.
    public var maximumBodyBytesInFlightPerOwner = 32 * 1024 * 1024
    /// What `Retry-After` says on a 503 or 429 the HTTP layer sends, in seconds.
    public var retryAfterSeconds = 1
    /// After a last answer: how long input is still read and discarded
    /// before the close, so the answer is not destroyed by a reset.
    public var lingerMilliseconds = 2_000
    /// After a last answer: the most input bytes read and discarded.
    public var maximumLingerBytes = 9 * 1024 * 1024
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
