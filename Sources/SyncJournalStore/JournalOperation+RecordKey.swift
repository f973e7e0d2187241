import SyncJournalProtocol

extension JournalOperation {
    /// The record this operation changes.
    public var key: RecordKey { RecordKey(kind: entity, id: recordID, space: space) }
}
