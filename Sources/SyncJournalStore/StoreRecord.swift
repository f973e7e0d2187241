import SyncJournalProtocol

/// A record as the app sees it: the server's copy with the queued edits on top.
public struct StoreRecord: Sendable, Hashable {
    /// The entity kind.
    public var kind: String
    /// The record id.
    public var id: String
    /// The space the record lives in (``SpaceID/personal`` unless it was
    /// created in, or pulled from, a shared space).
    public var space: SpaceID = .personal
    /// The fields the app shows.
    public var fields: [String: FieldValue]
    /// The stamp of the server copy underneath, `nil` for a record only this device knows.
    public var serverUpdatedAt: Int64?
    /// Whether queued edits are not yet acknowledged by the server.
    public var hasPendingChanges: Bool
    /// The highest model version (`SyncRecord.schemaVersion`) known to have
    /// written the record: the server row's (``ServerRow/modelVersion``) or
    /// that of an edit queued on this device, whichever is higher; `nil`
    /// when none stated one (read it as 1). Higher than the app's own
    /// version: a newer version of the app has written the record.
    public let modelVersion: Int?
}

/// The store's condition, as the app shows it.
public enum StoreStatus: Sendable, Hashable {
    /// Reads, edits and sync work (a store opened with
    /// ``LocalStore/Options/readOnly``: reads only).
    case ready
    /// The journal could not be read; reads say so, edits and sync are refused,
    /// and the file is never overwritten. The reason says whether it is corrupt
    /// (``LocalStore/salvage(to:includeRecordsAfterDamage:)`` is the way out)
    /// or written by a newer version.
    case unreadable(UnreadableReason)
    /// Writing failed in a way that needs the journal reopened (a failed
    /// `fdatasync`); edits are refused until then.
    case failed(reason: String)
    /// Suspended by ``LocalStore/suspend()``: the journal is closed and its
    /// lock released; reads answer from memory, writes fail with
    /// ``StoreError/suspended(path:)`` until ``LocalStore/resume()``.
    case suspended
    /// Retired: every call is refused and nothing more is written.
    case retired
    /// Closed by the app.
    case closed
}
