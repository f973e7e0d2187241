/// Whether a server is the one a device expects (journals/PROTOCOL.md,
/// "Server identity").
extension StorageRules {
    /// Why a server with `identity` refuses a request made with
    /// `expectation`, or `nil` when it serves it: a server without an
    /// identity (one from before identities) and a request without an
    /// expectation (a device that has not synced yet, or from before
    /// identities) are always served. Otherwise the identities must be the
    /// same, and `latestStamp` — the largest stamp the server ever issued to
    /// the user, or handed out as a cursor, which never goes down — must not
    /// be behind the stamp the device already pulled.
    ///
    /// Every backend asks this inside the transaction (or under the lock)
    /// that would apply the push or read the page, so a concurrent push
    /// cannot slip between the check and the work.
    package static func mismatch(of expectation: ServerExpectation?, identity: ServerIdentity?,
                                 latestStamp: Int64) -> ServerMismatch? {
        guard let expectation, let identity else { return nil }
        if expectation.identity != identity { return .differentServer(expected: expectation.identity, found: identity) }
        if let seen = expectation.seenStamp, latestStamp < seen {
            return .behind(identity: identity, seenStamp: seen, latestStamp: latestStamp)
        }
        return nil
    }
}
