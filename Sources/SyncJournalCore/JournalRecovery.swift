/// What opening a journal for writing found and did.
package struct JournalRecovery: Sendable, Hashable {
    /// How the file was found before anything was changed.
    package var statusFound: JournalStatus
    /// Whether the file was created by this open.
    package var created: Bool
    /// Bytes cut off a torn tail (0 when nothing was cut).
    package var bytesCut: Int64
    /// Where the cut bytes were saved, when any were cut.
    package var sideFile: String?
    /// Valid records found.
    package var recordCount: Int
    /// A leftover `<journal>.checkpoint` found by the open, and what became of it.
    package var checkpointLeftover: JournalCheckpointLeftover? = nil
}
