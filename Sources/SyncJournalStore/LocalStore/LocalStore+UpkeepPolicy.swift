extension LocalStore {
    /// When a store rewrites its journal as a checkpoint by itself, so the
    /// journal never just grows.
    ///
    /// A journal only appends: 2,000 updates of one record are 2,000 records
    /// on disk, and opening replays every one of them. After each durable
    /// write the store compares the journal with what a checkpoint of its
    /// state would take (the **live** bytes and items) and checkpoints when
    /// either rule holds:
    ///
    /// - **bytes**: the journal is larger than
    ///   `max(minimumJournalBytes, journalToLiveRatio × live bytes)`;
    /// - **records**: it holds more than
    ///   `max(minimumJournalRecords, journalToLiveRatio × live items)` records
    ///   (replay costs per record, however small).
    ///
    /// With the default ratio of 1.5 a journal stays between about 1× and
    /// 1.5× its live bytes, plus what is appended while a checkpoint is being
    /// written (the goal: never past 3×); each byte edited costs about two
    /// bytes of checkpoint written. Opening costs about what the bytes say
    /// (replaying an edit's record costs about what a checkpoint's record of
    /// one item does): a smaller ratio or record limit opens faster and
    /// writes more. A small journal (under 1 MiB and 1,000 records) is
    /// never rewritten.
    ///
    /// Live bytes are estimated, never measured by encoding the state on an
    /// edit: each checkpoint's size per live item, times the live items
    /// (counts the state keeps anyway); before the store's first checkpoint,
    /// half the journal's bytes per record or per live item, whichever is
    /// less (a record carries more than its share of a checkpoint).
    ///
    /// The checkpoint runs beside the journal, off the edit path: the state
    /// at one point is written to `<journal>.checkpoint` on the writer's
    /// thread while edits go on being journaled and acknowledged; then, on
    /// the store's thread, the records journaled meanwhile are copied after
    /// it and it replaces the journal (two syncs and a rename). Edits wait
    /// only for that last step and for the sync of the batches written just
    /// before it. A crash at any point leaves the old journal or the new
    /// one, each with every acknowledged edit. A checkpoint that fails (a
    /// full disk) removes its file and leaves the journal in use; the next
    /// is tried once the journal has grown by half.
    ///
    /// ```swift
    /// var options = LocalStore.Options()
    /// options.upkeep = .off                                    // the app calls checkpoint() itself
    /// options.upkeep = .init(minimumJournalBytes: 4 << 20)     // leave journals under 4 MiB alone
    /// ```
    public struct UpkeepPolicy: Sendable, Hashable {
        /// Whether the store checkpoints by itself at all.
        public var isEnabled: Bool
        /// A journal this small is never checkpointed for its size (1 MiB by default).
        public var minimumJournalBytes: Int
        /// A journal with this few records is never checkpointed for its
        /// record count (1,000 by default).
        public var minimumJournalRecords: Int
        /// How many times its live bytes (and live items, in records) a
        /// journal may grow to before it is checkpointed (1.5 by default; the
        /// initializer takes at least 1.1: closer to 1, a checkpoint would
        /// follow nearly every write).
        public var journalToLiveRatio: Double

        /// A policy that checkpoints past these limits.
        public init(minimumJournalBytes: Int = 1 << 20, minimumJournalRecords: Int = 1_000, journalToLiveRatio: Double = 1.5) {
            isEnabled = true
            self.minimumJournalBytes = max(0, minimumJournalBytes)
            self.minimumJournalRecords = max(0, minimumJournalRecords)
            self.journalToLiveRatio = journalToLiveRatio.isFinite ? max(1.1, journalToLiveRatio) : 1.5
        }

        /// The default: checkpoint past 1.5× the live bytes or items, never under 1 MiB and 1,000 records.
        public static let standard = UpkeepPolicy()

        /// No automatic checkpoint: the journal grows until the app calls ``LocalStore/checkpoint()``.
        public static let off: UpkeepPolicy = {
            var policy = UpkeepPolicy()
            policy.isEnabled = false
            return policy
        }()

        /// Checkpoints by record count only: past `max(records, live items)`
        /// records, whatever the bytes (tests use it to checkpoint often).
        package static func records(beyond records: Int) -> UpkeepPolicy {
            var policy = UpkeepPolicy(minimumJournalBytes: .max, minimumJournalRecords: records)
            // A checkpoint is a few records whatever the state: 1× the live items is never met right after one.
            policy.journalToLiveRatio = 1
            return policy
        }

        /// Whether a journal of `journalBytes` and `journalRecords` is due
        /// for a checkpoint of a state of `liveBytes` and `liveItems`.
        package func isDue(journalBytes: Int64, journalRecords: Int, liveBytes: Int64, liveItems: Int) -> Bool {
            guard isEnabled else { return false }
            // In floating point: no product overflows, and a huge one is simply never exceeded.
            let scaledBytes = Double(liveBytes) * journalToLiveRatio
            if Double(journalBytes) > max(Double(minimumJournalBytes), scaledBytes) { return true }
            return Double(journalRecords) > max(Double(minimumJournalRecords), Double(liveItems) * journalToLiveRatio)
        }
    }
}
