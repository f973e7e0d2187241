import SyncJournalProtocol

extension OperationID {
    /// A new random id (UUID version 4 layout), from a fast generator the
    /// system's randomness seeds once per process.
    public static func random() -> OperationID {
        OperationIDGenerator.withShared { generator in random(using: &generator) }
    }
}
