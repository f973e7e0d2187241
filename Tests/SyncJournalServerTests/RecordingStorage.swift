import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalServer

/// A storage that only counts the calls that reach it (each answers as an
/// empty server would, or fails with `failure`), to show that a refused
/// request never got there, or how a storage failure is answered.
final class RecordingStorage: SyncStorage {
    private let calls = Mutex<Int>(0)
    private let failure: StorageError?

    init(failing failure: StorageError? = nil) {
        self.failure = failure
    }

    /// How many calls reached the storage.
    var callCount: Int { calls.withLock { $0 } }

    func push(user: String, _ mutations: [Mutation]) throws(StorageError) -> [MutationResult] {
        calls.withLock { $0 += 1 }
        if let failure { throw failure }
        return mutations.map { MutationResult(operationID: $0.operationID, outcome: .conflict(server: nil)) }
    }

    func pull(user: String, _ request: PullRequest) throws(StorageError) -> PullPage {
        calls.withLock { $0 += 1 }
        return PullPage(rows: [], nextCursors: [:], hasMore: false)
    }

    func read(user: String, kind: String, id: String) throws(StorageError) -> ServerRow? {
        calls.withLock { $0 += 1 }
        return nil
    }

    func read(user: String, _ key: RecordKey) throws(StorageError) -> ServerRow? {
        calls.withLock { $0 += 1 }
        return nil
    }

    func change(user: String, _ change: SpaceChange) throws(StorageError) -> Space? {
        calls.withLock { $0 += 1 }
        return nil
    }

    func spaces(user: String) throws(StorageError) -> [Space] {
        calls.withLock { $0 += 1 }
        return []
    }

    func purgeTombstones(olderThan stamp: Int64, kind: String?) throws(StorageError) -> Int {
        calls.withLock { $0 += 1 }
        return 0
    }

    func closeConnections() {}
}
