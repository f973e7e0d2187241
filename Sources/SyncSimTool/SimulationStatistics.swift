/// What one run counted.
public struct SimulationStatistics: Sendable, Hashable {
    /// Steps run.
    public var steps = 0
    /// Local edits the store acknowledged.
    public var operations = 0
    /// Syncs run.
    public var syncs = 0
    /// Crashes of every kind.
    public var crashes = 0
    /// Crashes while a request was held.
    public var crashesMidRequest = 0
    /// Crashes inside a checkpoint.
    public var crashesMidCheckpoint = 0
    /// Times the server was restored from a backup, and reconciliations devices ran.
    public var serverRestores = 0
    public var reconciliations = 0
    /// Crashes inside an edit's write.
    public var crashesMidWrite = 0
    /// Conflicts surfaced on all devices.
    public var conflicts = 0
    /// Changes of a user's membership of the shared list.
    public var membershipChanges = 0
    /// Rejected edits surfaced on all devices at the end.
    public var rejections = 0
    /// Individual invariant checks evaluated.
    public var invariantChecks = 0
    /// Files attached in edits the store acknowledged.
    public var attachmentsAdded = 0
    /// Uploads the server took whole.
    public var attachmentsUploaded = 0
    /// Files fetched from the server when a user opened them.
    public var attachmentsDownloaded = 0
    /// Devices that died while an upload was held.
    public var crashesMidUpload = 0
}
