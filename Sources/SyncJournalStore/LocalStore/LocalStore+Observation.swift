import SyncJournalProtocol

// The store's side of QueryObservation: a reader starts an observation,
// then asks for the next results; a change of a kind observed runs the
// query again only for readers waiting, and marks the others dirty.
extension LocalStore {
    /// Starts observing `query`: its token and current results, or `nil`
    /// when the store is closed, retired or unreadable.
    func startObservation(_ query: Query) -> (token: Int, results: [StoreRecord])? {
        guard isOpen, (try? checkReadable()) != nil, !Task.isCancelled else { return nil }
        let results = results(of: query)
        return (observedQueries.add(query, delivered: results), results)
    }

    /// The next results of observation `token` that differ from the last
    /// ones its reader got; waits for a change when there are none yet.
    /// `nil` once the observation ended.
    func nextResults(_ token: Int) async -> [StoreRecord]? {
        guard var observation = observedQueries[token] else { return nil }
        if Task.isCancelled {
            observedQueries.remove(token)
            return nil
        }
        if observation.dirty {
            observation.dirty = false
            let results = results(of: observation.query)
            if results != observation.delivered {
                observation.delivered = results
                observedQueries[token] = observation
                return results
            }
            observedQueries[token] = observation
        }
        return await withCheckedContinuation { continuation in
            // A copy of the iterator asking too: the earlier wait ends.
            observedQueries[token]?.waiter?.resume(returning: nil)
            observedQueries[token]?.waiter = continuation
        }
    }

    /// Ends observation `token` (its reader was cancelled or dropped it).
    func stopObservation(_ token: Int) {
        observedQueries.remove(token)
    }

    /// A change touched records of `kinds`: waiting readers of those kinds
    /// get new results if theirs changed; the others are marked dirty.
    func wakeObservations(of kinds: Set<String>) {
        for token in observedQueries.tokens(observing: kinds) {
            guard var observation = observedQueries[token] else { continue }
            guard let waiter = observation.waiter else {
                observation.dirty = true
                observedQueries[token] = observation
                continue
            }
            let results = results(of: observation.query)
            guard results != observation.delivered else { continue }
            observation.delivered = results
            observation.waiter = nil
            observedQueries[token] = observation
            waiter.resume(returning: results)
        }
    }
}
