/// A checkpoint written beside a journal that stays in use, the way a
/// log-structured store switches logs: the owner takes its state at one
/// point of the journal, the state goes to `<journal>.checkpoint` on the
/// writer's queue (``JournalWriter/writeBackgroundCheckpoint(_:produce:)``)
/// while appends go on to the journal, and a short step on the owner's
/// thread copies the records appended meanwhile after it and renames it
/// over the journal (``JournalWriter/switchToBackgroundCheckpoint(_:appending:)``).
///
/// Until that rename the journal holds every record and the file beside it
/// holds only a fold of a prefix of them: a crash leaves a leftover that the
/// next open proves redundant and removes (``JournalCheckpointLeftover``).
/// After it the new file holds the same records' state, each complete, and
/// it was synced before the rename.
package final class BackgroundCheckpoint: @unchecked Sendable {
    // @unchecked: `fd` and `file` are used by one thread at a time: the
    // writer's queue while the parts are written, then whoever took the
    // checkpoint from the writer's state (the owner's switch, an abandon,
    // or the writer's close), which happens after that write is awaited or
    // on the same serial queue.

    /// The new file's header: the journal's id, a new generation continuing
    /// the journal's, starting at the sequence number the journal had
    /// reached when the state was taken.
    let header: JournalHeader
    /// Where the file is written before it replaces the journal.
    let temporary: String
    var fd: FileDescriptor?
    var file: CheckpointFileWriter?
    /// Checkpoint records written so far (the parts; not the records copied
    /// at the switch, nor the closing record).
    package private(set) var partRecords = 0
    /// Bytes of the parts in the file.
    package private(set) var partBytes: Int64 = 0

    init(header: JournalHeader, temporary: String) {
        self.header = header
        self.temporary = temporary
    }

    /// Records what the parts took.
    func partsWritten(records: Int, bytes: Int64) {
        partRecords = records
        partBytes = bytes
    }

    /// Closes and removes the unfinished file; the journal is untouched.
    /// Best effort: a file left behind is a leftover the next open removes.
    func discard(io: FileIO) {
        file?.abandon()
        file = nil
        if let fd { try? io.system.close(fd) }
        fd = nil
        try? io.system.unlink(temporary)
    }
}
