import SyncJournalProtocol

extension OperationID: PartitionKey {
    /// The id's words are random: one multiply folds them into the top bits.
    package var partitionBits: UInt64 {
        let (first, second) = words
        return (first ^ second.byteSwapped) &* 0x9E37_79B9_7F4A_7C15
    }
}
