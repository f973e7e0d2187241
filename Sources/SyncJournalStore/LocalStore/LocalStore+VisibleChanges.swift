import SyncJournalProtocol

extension LocalStore {
    /// The one place the store hears that its visible state changed: a batch
    /// of journaled events was applied (local edits, pulls, acknowledgements,
    /// conflicts, quarantines, discards and retries all come as such events),
    /// touching the records `keys`. It keeps the indexes up to date, tells
    /// ``outcome(of:)`` waiters and ``changes()`` streams what happened, and
    /// wakes the observed queries of the kinds touched.
    func visibleStateChanged(_ keys: [RecordKey], events: [StoreEvent]) {
        if !fieldIndexes.isEmpty {
            for key in keys where fieldIndexes.covers(key.kind) { fieldIndexes.update(key, state.visibleFields(of: key)) }
        }
        publish(events)
        if !observedQueries.isEmpty && !keys.isEmpty { wakeObservations(of: Set(keys.map(\.kind))) }
    }

    /// Whether anything needs the record keys a change touched: an index or an observed query.
    var followsVisibleChanges: Bool { !fieldIndexes.isEmpty || !observedQueries.isEmpty }
}
