import SyncJournalProtocol

/// The store's two states and the rule between them, kept by this type
/// alone: `staged` is `visible` with the events of every batch that is
/// written but not yet durable folded on top.
///
/// `visible` is what the app sees (disk before screen: only durable
/// events). `staged` is what the next change is decided against, so a
/// change queued behind a batch being synced sees that batch. Both are
/// kept (rather than the visible state copied per batch) so an edit costs
/// the same with 10 or 100,000 records; while nothing is in flight they
/// share their storage.
struct VisibleAndStaged {
    /// The durable state: what the app sees.
    private(set) var visible: StoreState
    /// `visible` plus the events of the written, unsynced batches.
    private(set) var staged: StoreState

    /// Both states equal to `state` (nothing in flight).
    init(_ state: StoreState) {
        visible = state
        staged = state
    }

    /// Starts again from `state` with nothing in flight (a journal read
    /// back on resume, or an empty state for an unreadable one).
    mutating func reset(to state: StoreState) {
        visible = state
        staged = state
    }

    /// Decides `batch` against the staged state and folds the events of
    /// the changes that succeed into it: they are about to be written.
    mutating func decide(_ batch: [WriteBatcher.Request]) -> WriteBatcher.Decision {
        WriteBatcher.decide(batch, staged: &staged)
    }

    /// A barrier made `batch` durable: its events join the visible state.
    /// `stagedIsWhatFollows` says that no other batch is in flight and the
    /// staged state holds exactly the visible state plus this batch: it
    /// then takes the visible state's place instead of the events being
    /// folded a second time. Records the keys the events touch into
    /// `touched` when `tracking` (indexes and observed queries need them).
    mutating func makeVisible(_ events: [StoreEvent], stagedIsWhatFollows: Bool, tracking: Bool, touched: inout [RecordKey]) {
        if stagedIsWhatFollows && !tracking {
            visible = staged
            return
        }
        for event in events {
            if tracking { visible.collectKeys(touchedBy: event, into: &touched) }
            visible.apply(event)
        }
        // Nothing else is in flight: the two hold the same state again, so
        // they share the storage instead of keeping two copies.
        if stagedIsWhatFollows { staged = visible }
    }

    /// Every batch in flight failed (a barrier failed, or the store stops
    /// with them unsynced): nothing but the visible state stands.
    mutating func dropInFlight() {
        staged = visible
    }

    /// One batch failed to be written while `inFlight` (the batches before
    /// it, written and awaiting their barrier) still stand: the staged state
    /// is rebuilt from the visible one and theirs.
    mutating func restage(inFlight: [WriteBatcher.Written]) {
        staged = visible
        for written in inFlight {
            for event in written.decision.events { staged.apply(event) }
        }
    }
}
