import SyncJournalProtocol
import SyncJournalCore

extension RecordType {
    /// One local edit (`journals/FORMAT.md`, "Operation").
    package static let operation = RecordType(rawValue: 0x0001)
    /// Several edits made durable together.
    package static let operationBatch = RecordType(rawValue: 0x0002)
    /// Operations that may reach the server from now on.
    package static let sentMarker = RecordType(rawValue: 0x0003)
    /// Operations whose hand-over failed before they left the device (offline).
    package static let sendWithdrawn = RecordType(rawValue: 0x0008)
    /// Operations the server applied, with its rows.
    package static let acknowledgement = RecordType(rawValue: 0x0004)
    /// A failed attempt as 1.0 journaled it (1.1 journals ``attemptFailed``).
    package static let rejection = RecordType(rawValue: 0x0005)
    /// A conflict as 1.0 journaled it (1.1 journals ``conflictResolved``).
    package static let conflict = RecordType(rawValue: 0x0006)
    /// An edit together with the compaction it caused.
    package static let compaction = RecordType(rawValue: 0x0007)
    /// An attempt failed; the operation stays queued or is quarantined (1.1).
    package static let attemptFailed = RecordType(rawValue: 0x0009)
    /// The app released a quarantined operation for another try (1.1).
    package static let quarantineReleased = RecordType(rawValue: 0x000A)
    /// The app discarded a queued operation (1.1).
    package static let operationDiscarded = RecordType(rawValue: 0x000B)
    /// The app dismissed a conflict (1.1).
    package static let conflictDismissed = RecordType(rawValue: 0x000C)
    /// The app dismissed a conflict and queued its own edit, in one record (1.1).
    package static let conflictSettled = RecordType(rawValue: 0x000E)
    /// A conflict and the policy's resolution (1.1).
    package static let conflictResolved = RecordType(rawValue: 0x000D)
    /// Several edits of one `write` transaction, durable, visible and replayed together (2.1).
    package static let transaction = RecordType(rawValue: 0x000F)
    /// Rows the server no longer has, found by a full re-pull (1.1).
    package static let rowsForgotten = RecordType(rawValue: 0x0103)
    /// What the device knows of its server: an identity learned, a mismatch, a reconciliation adopted (2.4).
    package static let serverIdentity = RecordType(rawValue: 0x0104)
    /// A reconciliation's re-uploads and rebased edits (2.4).
    package static let reuploads = RecordType(rawValue: 0x0010)
    /// A page of rows pulled from the server, with its cursor.
    package static let pulledRows = RecordType(rawValue: 0x0101)
    /// Reserved: pull cursors alone (never written; cursors travel with their page).
    package static let pullCursors = RecordType(rawValue: 0x0102)
    /// *2.5* A page of rows of a shared space and the cursor after it.
    package static let spaceRowsPulled = RecordType(rawValue: 0x0105)
    /// *2.5* Rows of a shared space a full re-pull no longer returned.
    package static let spaceRowsForgotten = RecordType(rawValue: 0x0106)
    /// *2.5* A shared space's description, as the server last gave it.
    package static let spaceDescribed = RecordType(rawValue: 0x0107)
    /// *2.5* The user's membership of a shared space ended.
    package static let spaceLost = RecordType(rawValue: 0x0108)

    /// A short lowercase name for tools (`operation`, `batch`, `salvaged`,
    /// `sync-horizon`, or the hex number of a type this version does not name).
    package var name: String {
        switch self {
        case .operation: return "operation"
        case .operationBatch: return "batch"
        case .sentMarker: return "sent"
        case .sendWithdrawn: return "unsent"
        case .acknowledgement: return "ack"
        case .rejection: return "rejection"
        case .conflict: return "conflict"
        case .compaction: return "compaction"
        case .pulledRows: return "pulled-rows"
        case .pullCursors: return "cursors"
        case .checkpoint: return "checkpoint"
        case .attemptFailed: return "attempt-failed"
        case .quarantineReleased: return "released"
        case .operationDiscarded: return "discarded"
        case .conflictDismissed: return "conflict-dismissed"
        case .conflictSettled: return "conflict-settled"
        case .conflictResolved: return "conflict-resolved"
        case .rowsForgotten: return "forgotten"
        case .transaction: return "transaction"
        case .serverIdentity: return "server"
        case .reuploads: return "reuploads"
        case .spaceRowsPulled: return "space-rows"
        case .spaceRowsForgotten: return "space-forgotten"
        case .spaceDescribed: return "space"
        case .spaceLost: return "space-lost"
        case .salvaged: return "salvaged"
        case .syncHorizon: return "sync-horizon"
        default: return description
        }
    }
}
