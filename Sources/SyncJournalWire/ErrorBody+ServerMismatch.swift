import SyncJournalProtocol

/// The `server_mismatch` body (HTTP 409; journals/PROTOCOL.md, "Server identity").
extension ErrorBody {
    /// The body of a refusal: `expected` and `found` for another server;
    /// `found`, `seenStamp` and `latestStamp` for one behind the device.
    ///
    /// ```swift
    /// let body = ErrorBodyCodec.encode(ErrorBody(mismatch: .differentServer(expected: known, found: current)))
    /// ```
    public init(mismatch: ServerMismatch) {
        switch mismatch {
        case .differentServer(let expected, let found):
            self.init(code: .serverMismatch, message: mismatch.description + "; nothing was applied", expected: expected, found: found)
        case .behind(let identity, let seen, let latest):
            self.init(code: .serverMismatch, message: mismatch.description + "; nothing was applied", found: identity,
                      seenStamp: seen, latestStamp: latest)
        }
    }

    /// The refusal a `server_mismatch` body stands for, or `nil` when the
    /// code is another or its members say neither case (a malformed reply).
    ///
    /// ```swift
    /// if let mismatch = try ErrorBodyCodec.decode(body).mismatch { throw TransportError.serverMismatch(mismatch) }
    /// ```
    public var mismatch: ServerMismatch? {
        guard code == .serverMismatch, let found else { return nil }
        if let seenStamp, let latestStamp { return .behind(identity: found, seenStamp: seenStamp, latestStamp: latestStamp) }
        if let expected { return .differentServer(expected: expected, found: found) }
        return nil
    }
}
