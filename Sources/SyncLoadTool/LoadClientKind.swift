/// Which HTTP client a load run's clients use (`sync-load --client`).
public enum LoadClientKind: String, Sendable, Hashable, CaseIterable {
    /// `HTTPTransport` over URLSession, as an app syncs (the default).
    case urlSession = "urlsession"
    /// A lean HTTP/1.1 client on a thread of its own per load client
    /// (``PlainHTTPConnection``), so that a load generator on the server's
    /// machine leaves it more of the CPU. Plain `http` only.
    case plain
}
