import SyncJournalProtocol

extension RecordKey: PartitionKey {
    /// A multiply-and-xor pass over the kind's and the id's bytes (record ids
    /// are short), finished with a multiply that spreads them to the top bits.
    package var partitionBits: UInt64 {
        var bits: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in kind.utf8 { bits = (bits ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        bits = (bits ^ 0xFF) &* 0x0000_0100_0000_01B3
        for byte in id.utf8 { bits = (bits ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return (bits ^ bits >> 29) &* 0x9E37_79B9_7F4A_7C15
    }
}
