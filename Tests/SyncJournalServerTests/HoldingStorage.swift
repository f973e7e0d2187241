import Dispatch
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalServer

/// A storage whose pushes for one user wait inside the call until the test
/// releases them (each entry is signalled first), over a real SQLite storage.
final class HoldingStorage: SyncStorage {
    let inner: SQLiteStorage
    let heldUser: String
    /// Signalled by each push of `heldUser` as it enters storage.
    let entered = DispatchSemaphore(value: 0)
    /// Each signal lets one held push go on.
    let released = DispatchSemaphore(value: 0)

    init(path: String, holding user: String) throws {
        inner = try SQLiteStorage(path: path)
        heldUser = user
    }

    func push(user: String, _ mutations: [Mutation]) throws(StorageError) -> [MutationResult] {
        if user == heldUser {
            entered.signal()
            released.wait()
        }
        return try inner.push(user: user, mutations)
    }

    func pull(user: String, _ request: PullRequest) throws(StorageError) -> PullPage { try inner.pull(user: user, request) }

    func read(user: String, kind: String, id: String) throws(StorageError) -> ServerRow? { try inner.read(user: user, kind: kind, id: id) }
    func read(user: String, _ key: RecordKey) throws(StorageError) -> ServerRow? { try inner.read(user: user, key) }
    func change(user: String, _ change: SpaceChange) throws(StorageError) -> Space? { try inner.change(user: user, change) }
    func spaces(user: String) throws(StorageError) -> [Space] { try inner.spaces(user: user) }

    func purgeTombstones(olderThan stamp: Int64, kind: String?) throws(StorageError) -> Int {
        try inner.purgeTombstones(olderThan: stamp, kind: kind)
    }

    func closeConnections() { inner.closeConnections() }
}
