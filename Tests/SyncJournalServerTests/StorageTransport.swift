import Foundation
import SyncJournalProtocol
import SyncJournalServer

/// A ``SyncTransport`` straight onto a ``SyncStorage`` for one user, with no
/// HTTP between: the engine meets the storage's own answers. Each call runs
/// on a thread of its own (storage calls block), not on the concurrency pool.
struct StorageTransport: SyncTransport {
    let storage: any SyncStorage
    let user: String

    private func call<T: Sendable>(_ work: @escaping @Sendable () throws(StorageError) -> T) async throws(TransportError) -> T {
        let result: Result<T, StorageError> = await withCheckedContinuation { continuation in
            Thread {
                do throws(StorageError) { continuation.resume(returning: .success(try work())) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }.start()
        }
        switch result {
        case .success(let value): return value
        case .failure(.cursorExpired(let kinds, let spaceKinds)): throw .cursorExpired(kinds: PullRefusal.expiredKinds(kinds, spaceKinds))
        case .failure(.serverMismatch(let mismatch)): throw .serverMismatch(mismatch)
        case .failure(let error): throw .transient(reason: "\(error)", retryAfter: nil)
        }
    }

    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        try await call { [storage, user] () throws(StorageError) in try storage.push(user: user, mutations) }
    }

    func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        try await call { [storage, user] () throws(StorageError) in try storage.push(user: user, mutations, expecting: expectation) }
    }

    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        try await call { [storage, user] () throws(StorageError) in try storage.pull(user: user, request) }
    }

    func read(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        try await call { [storage, user] () throws(StorageError) in try storage.read(user: user, kind: kind, id: id) }
    }
}
