import SyncJournalProtocol

/// SQLite's statements as the shared push and pull rules use them.
extension StorageTransaction: StorageQueries {
    /// The next stamp from the stamp row. Every stored stamp came from that
    /// counter, so the next one is already above the row's `previous`, and
    /// no two writes of any space share one.
    func nextStamp(after previous: Int64?, in space: SpaceID) throws(StorageError) -> Int64 { try nextStamp(in: space) }

    /// A refused pull as the HTTP reply reports it.
    static func failure(_ refusal: PullRefusal) -> StorageError { StorageError(refusal) }
}
