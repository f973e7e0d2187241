extension SyncStorage {
    /// A storage that keeps no operation retention forgets nothing: 0.
    ///
    /// ```swift
    /// let forgotten = try storage.pruneRememberedOperations(limit: 1_000)
    /// ```
    @discardableResult
    public func pruneRememberedOperations(limit: Int) throws(StorageError) -> Int { 0 }
}
