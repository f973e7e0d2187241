/// Why a server refused to serve a device: it is not the server the device
/// synced with, or it went back in time. Nothing was applied; the device
/// keeps every record and edit, and syncs again only after the app runs a
/// reconciliation.
///
/// ```swift
/// if case .serverMismatch(.differentServer(let expected, let found)) = error {
///     print("synced with \(expected), now talking to \(found)")
/// }
/// ```
public enum ServerMismatch: Sendable, Hashable, CustomStringConvertible {
    /// The server's database has another identity: it was reset, or
    /// replaced by another server's database.
    case differentServer(expected: ServerIdentity, found: ServerIdentity)
    /// The server has the expected identity but its latest stamp for this
    /// user is behind what the device already pulled from it: it was
    /// restored from a copy taken before the device's last sync.
    case behind(identity: ServerIdentity, seenStamp: Int64, latestStamp: Int64)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .differentServer(let expected, let found):
            return "the server is not the one this device synced with (expected \(expected), found \(found))"
        case .behind(let identity, let seen, let latest):
            return "the server \(identity) went back in time (this device pulled up to \(seen), the server's latest is \(latest))"
        }
    }
}
