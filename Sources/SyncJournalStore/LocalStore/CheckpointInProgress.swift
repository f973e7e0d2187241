import SyncJournalCore

/// An automatic checkpoint the store is writing beside its journal while
/// edits go on: what it needs to replace the journal once its file is
/// written. Used on the store's actor.
struct CheckpointInProgress {
    /// The file being written, and the writer's handle on it.
    var checkpoint: BackgroundCheckpoint
    /// The records journaled since the state was taken, in file order: the
    /// switch copies them after the checkpoint's parts.
    var tail: [(type: RecordType, payload: [UInt8])]
    /// Live items of the state taken, to measure bytes per live item.
    var liveItems: Int
    /// Whether the file is written and synced: it replaces the journal as
    /// soon as no batch is waiting for a sync, and new batches wait for that.
    var readyToSwitch = false
}
