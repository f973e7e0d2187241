/// How a wait for server changes ended (``SyncTransport/waitForChanges(after:timeout:)``).
///
/// ```swift
/// switch try await transport.waitForChanges(after: cursors, timeout: .seconds(60)) {
/// case .changed: pullNow()
/// case .timedOut: waitAgain()
/// case .notSupported: pullOnATimerInstead()
/// }
/// ```
public enum ChangeWaitResult: Sendable, Hashable, CustomStringConvertible {
    /// The server has rows after the cursors the wait was opened with: a pull finds them.
    case changed
    /// Nothing changed within the timeout; a new wait may be opened at once.
    case timedOut
    /// The transport cannot wait for changes; the engine relies on idle pulls.
    case notSupported

    /// `changed`, `timed out` or `not supported`.
    public var description: String {
        switch self {
        case .changed: return "changed"
        case .timedOut: return "timed out"
        case .notSupported: return "not supported"
        }
    }
}
