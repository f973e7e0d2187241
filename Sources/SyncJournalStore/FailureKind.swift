import SyncJournalProtocol
/// Why an attempt to deliver an operation failed, as far as the store cares:
/// whether retrying can help, and whether it uses up the operation's budget
/// of permanent failures.
public enum FailureKind: Sendable, Hashable, CustomStringConvertible {
    /// "Not now": a timeout, an overloaded server, a collision that could not
    /// be read back. Retried with backoff; never counts toward quarantine.
    case transient
    /// "No": the server refused the operation (forbidden, invalid, too large).
    /// Counts toward ``LocalStore/Options/maximumPermanentFailures``.
    case permanent
    /// An update found no row it may change and no readable newer row: the
    /// record was deleted or this user lost access. Retrying
    /// cannot help, so the operation is quarantined at once and the device
    /// forgets its copy of the row.
    case deletedOrNoAccess

    /// The failure's code in journal records: 0, 1 or 2.
    package var code: UInt8 {
        switch self {
        case .transient: return 0
        case .permanent: return 1
        case .deletedOrNoAccess: return 2
        }
    }

    /// The failure kind with this journal code, if there is one.
    package init?(code: UInt8) {
        switch code {
        case 0: self = .transient
        case 1: self = .permanent
        case 2: self = .deletedOrNoAccess
        default: return nil
        }
    }

    /// `transient`, `permanent` or `deleted-or-no-access`.
    public var description: String {
        switch self {
        case .transient: return "transient"
        case .permanent: return "permanent"
        case .deletedOrNoAccess: return "deleted-or-no-access"
        }
    }
}
