/// Every visible record of one ``SyncRecord`` type: those that decode, and a report for
/// each one that does not (never silently dropped).
public struct TypedRecords<Record: SyncRecord>: Sendable {
    /// The records that decode, ordered by record id.
    public let values: [Record]
    /// The records of the kind that do not decode as `Record`, ordered by record id.
    public let undecodable: [UndecodableRecord]

    /// Makes a result; the store makes these.
    package init(values: [Record], undecodable: [UndecodableRecord]) {
        self.values = values
        self.undecodable = undecodable
    }
}
