import SyncJournalProtocol
/// Why an attempt to deliver an operation failed, as far as the store cares:
/// whether retrying can help, and whether it uses up the operation's budget
/// of permanent failures.
public enum FailureKind: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// "Not now": a timeout, an overloaded server, a collision that could not
    /// be read back. Retried with backoff; never counts toward quarantine.
    case transient = 0
    /// "No": the server refused the operation (forbidden, invalid, too large).
    /// Counts toward ``LocalStore/Options/maximumPermanentFailures``.
    case permanent = 1
    /// An update found no row it may change and no readable newer row: the
    /// record was deleted or this user lost access. Retrying
    /// cannot help, so the operation is quarantined at once and the device
    /// forgets its copy of the row.
    case deletedOrNoAccess = 2

    /// `transient`, `permanent` or `deleted-or-no-access`.
    public var description: String {
        switch self {
        case .transient: return "transient"
        case .permanent: return "permanent"
        case .deletedOrNoAccess: return "deleted-or-no-access"
        }
    }
}
