import Dispatch
import SyncJournalProtocol
import SyncJournalServer

/// A SQLite storage whose one-row pulls (a wait's look for changes) hold
/// after reading, until the test releases them: what the look found is
/// already decided while the test pushes.
final class LookHoldingStorage: SyncStorage {
    let inner: SQLiteStorage
    /// Signalled by each one-row pull once it has read.
    let entered = DispatchSemaphore(value: 0)
    /// Each signal lets one held pull return.
    let released = DispatchSemaphore(value: 0)

    init(path: String) throws {
        inner = try SQLiteStorage(path: path)
    }

    func pull(user: String, _ request: PullRequest) throws(StorageError) -> PullPage {
        let page = try inner.pull(user: user, request)
        if request.limit == 1 {
            entered.signal()
            released.wait()
        }
        return page
    }

    func push(user: String, _ mutations: [Mutation]) throws(StorageError) -> [MutationResult] { try inner.push(user: user, mutations) }

    func read(user: String, kind: String, id: String) throws(StorageError) -> ServerRow? { try inner.read(user: user, kind: kind, id: id) }
    func read(user: String, _ key: RecordKey) throws(StorageError) -> ServerRow? { try inner.read(user: user, key) }
    func change(user: String, _ change: SpaceChange) throws(StorageError) -> Space? { try inner.change(user: user, change) }
    func spaces(user: String) throws(StorageError) -> [Space] { try inner.spaces(user: user) }

    func purgeTombstones(olderThan stamp: Int64, kind: String?) throws(StorageError) -> Int {
        try inner.purgeTombstones(olderThan: stamp, kind: kind)
    }

    func closeConnections() { inner.closeConnections() }

    func observeChanges(_ observer: @escaping @Sendable (StorageChange) -> Void) { inner.observeChanges(observer) }

    func stopObservingChanges() { inner.stopObservingChanges() }
}
