/// What a device knows of the server it syncs with, sent with each push and
/// pull: a server that is not that one, or whose history ends before what
/// the device has already pulled from it (a database restored from an
/// earlier copy), refuses the request before applying anything, with
/// ``TransportError/serverMismatch(_:)``.
///
/// ```swift
/// let expectation = ServerExpectation(identity: identity, seenStamp: 1_733_000_000_123)
/// ```
public struct ServerExpectation: Sendable, Hashable {
    /// The identity the device first synced with.
    public var identity: ServerIdentity
    /// The latest stamp the device has pulled from this server for its
    /// user (`nil`: none yet). A server whose own latest stamp for the user
    /// is behind it has lost changes the device saw.
    public var seenStamp: Int64?

    /// Creates an expectation.
    public init(identity: ServerIdentity, seenStamp: Int64?) {
        self.identity = identity
        self.seenStamp = seenStamp
    }
}
