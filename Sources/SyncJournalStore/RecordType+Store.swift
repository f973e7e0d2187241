import SyncJournalCore

extension RecordType {
    /// One local edit (`journals/FORMAT.md`, "Operation").
    public static let operation = RecordType(rawValue: 0x0001)
    /// Several edits made durable together.
    public static let operationBatch = RecordType(rawValue: 0x0002)
    /// Reserved: operations that may have reached the server.
    public static let sentMarker = RecordType(rawValue: 0x0003)
    /// Operations whose hand-over failed before they left the device (offline).
    public static let sendWithdrawn = RecordType(rawValue: 0x0008)
    /// Reserved: operations the server applied.
    public static let acknowledgement = RecordType(rawValue: 0x0004)
    /// Reserved: operations the server rejected.
    public static let rejection = RecordType(rawValue: 0x0005)
    /// Reserved: conflicts surfaced to the app.
    public static let conflict = RecordType(rawValue: 0x0006)
    /// Reserved: a compactor's rewrite of the queue.
    public static let compaction = RecordType(rawValue: 0x0007)
    /// Reserved: rows pulled from the server.
    public static let pulledRows = RecordType(rawValue: 0x0101)
    /// Reserved: pull cursors.
    public static let pullCursors = RecordType(rawValue: 0x0102)

    /// A short lowercase name for tools (`operation`, `batch`, `salvaged`,
    /// or the hex number of a type this version does not name).
    public var name: String {
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
        case .salvaged: return "salvaged"
        default: return description
        }
    }
}
