import SyncJournalProtocol

/// The queries being observed through ``LocalStore/observe(_:)``, each with
/// the results its reader last got and, when the reader waits, its waiter.
///
/// A reader that does not wait is only marked dirty when a change touches
/// its kind: its query is run again when it asks, so the store never works
/// for, nor waits on, a slow reader, and the reader gets the latest results.
struct ObservedQueries {
    struct Observation {
        var query: Query
        var delivered: [StoreRecord]
        var dirty = false
        var waiter: CheckedContinuation<[StoreRecord]?, Never>?
    }

    private var observations: [Int: Observation] = [:]
    private var nextToken = 0

    /// Whether anything is observed.
    var isEmpty: Bool { observations.isEmpty }

    /// Starts observing `query`, whose reader got `results`.
    mutating func add(_ query: Query, delivered results: [StoreRecord]) -> Int {
        let token = nextToken
        nextToken += 1
        observations[token] = Observation(query: query, delivered: results)
        return token
    }

    subscript(token: Int) -> Observation? {
        get { observations[token] }
        set { observations[token] = newValue }
    }

    /// The tokens of the observations of `kinds`.
    func tokens(observing kinds: Set<String>) -> [Int] {
        observations.compactMap { kinds.contains($0.value.query.kind) ? $0.key : nil }
    }

    /// Ends the observation `token`: its waiting reader gets `nil`.
    mutating func remove(_ token: Int) {
        observations.removeValue(forKey: token)?.waiter?.resume(returning: nil)
    }

    /// Ends every observation (the store closed).
    mutating func removeAll() {
        let ended = observations
        observations = [:]
        for observation in ended.values { observation.waiter?.resume(returning: nil) }
    }
}
