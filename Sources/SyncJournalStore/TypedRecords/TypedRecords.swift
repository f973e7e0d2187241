/// Every visible record of one ``SyncRecord`` type: those that decode, and a report for
/// each one that does not (never silently dropped).
public struct TypedRecords<Record: SyncRecord>: Sendable {
    /// The records that decode, in the order they were read (by record id from
    /// ``LocalStore/fetchAll(_:)``, in the query's order from a query).
    public let values: [Record]
    /// The records that do not decode as `Record`, in the same order.
    public let undecodable: [UndecodableRecord]

    /// Decodes records read untyped, for example each result of
    /// ``LocalStore/observe(_:)``, keeping their order.
    ///
    /// ```swift
    /// for await results in store.observe(Query(Note.self)) {
    ///     let notes = TypedRecords<Note>(decoding: results)
    ///     print(notes.values.count, "notes,", notes.undecodable.count, "unreadable")
    /// }
    /// ```
    public init(decoding records: [StoreRecord]) {
        var values: [Record] = []
        var undecodable: [UndecodableRecord] = []
        for record in records {
            switch LocalStore.decode(Record.self, from: record) {
            case .success(let value): values.append(value)
            case .failure(let report): undecodable.append(report)
            }
        }
        self.init(values: values, undecodable: undecodable)
    }

    /// Makes a result; the store makes these.
    package init(values: [Record], undecodable: [UndecodableRecord]) {
        self.values = values
        self.undecodable = undecodable
    }
}
