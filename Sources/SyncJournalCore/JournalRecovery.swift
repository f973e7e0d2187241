/// What opening a journal for writing found and did.
public struct JournalRecovery: Sendable, Hashable {
    /// How the file was found before anything was changed.
    public var statusFound: JournalStatus
    /// Whether the file was created by this open.
    public var created: Bool
    /// Bytes cut off a torn tail (0 when nothing was cut).
    public var bytesCut: Int64
    /// Where the cut bytes were saved, when any were cut.
    public var sideFile: String?
    /// Valid records found.
    public var recordCount: Int
}
