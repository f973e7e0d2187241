import SyncJournalProtocol

/// PostgreSQL's statements as the shared push and pull rules use them.
extension PostgreSQLTransaction: StorageQueries {
    /// The next stamp from the locked stamp row. Every stored stamp came from
    /// that counter, so the next one is already above the row's `previous`.
    func nextStamp(after previous: Int64?) throws(StorageError) -> Int64 { try nextStamp() }

    /// A refused pull as the HTTP reply reports it.
    static func failure(_ refusal: PullRefusal) -> StorageError { StorageError(refusal) }
}
