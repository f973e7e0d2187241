import SyncJournalProtocol

extension PostgreSQLStorage {
    /// Forgets at most `limit` operations remembered longer than
    /// ``operationRetention`` ago, oldest first, in one short transaction
    /// (see ``SyncStorage/pruneRememberedOperations(limit:)``). The cutoff
    /// is taken from the storage's clock, or the database server's.
    ///
    /// Rows another transaction has locked are skipped (`skip locked`), so a
    /// prune never waits behind pushes; it takes no stamp lock, and a push
    /// never needs an operation past the retention.
    ///
    /// ```swift
    /// while try storage.pruneRememberedOperations(limit: 1_000) == 1_000 {}
    /// ```
    @discardableResult
    public func pruneRememberedOperations(limit: Int) throws(StorageError) -> Int {
        guard let retention = operationRetention, limit > 0 else { return 0 }
        let cutoff = now.map { clock in retention.pruneBefore(now: clock()) }
        return try transaction("begin isolation level read committed") { queries throws(StorageError) in
            try queries.forgetOperations(rememberedBefore: cutoff, retentionMilliseconds: retention.retentionMilliseconds, limit: limit)
        }
    }
}
