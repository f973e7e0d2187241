/// Every visible record of one ``SyncRecord`` type: those that decode, and a report for
/// each one that does not (never silently dropped).
public struct TypedRecords<Record: SyncRecord>: Sendable {
    /// The records that decode, in the order they were read (by record id from
    /// ``LocalStore/fetchAll(_:in:)``, in the query's order from a query).
    public let values: [Record]
    /// The records that do not decode as `Record`, in the same order.
    public let undecodable: [UndecodableRecord]
    /// The ids of the records in ``values`` that a newer version of the model wrote
    /// (``StoreRecord/modelVersion`` above ``SyncRecord/schemaVersion``): a status, not an
    /// error. Such a record shows what this version's model can express; a field it
    /// cannot reads as its default, and stays stored as it is for the newer version.
    public let writtenByNewerVersion: [Record.ID]

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
        var newer: [Record.ID] = []
        let schema = RecordSchema(Record.self)
        for record in records {
            switch LocalStore.decode(Record.self, from: record, schema: schema) {
            case .success(let value):
                values.append(value)
                if (record.modelVersion ?? 1) > schema.version { newer.append(value.id) }
            case .failure(let report): undecodable.append(report)
            }
        }
        self.init(values: values, undecodable: undecodable, writtenByNewerVersion: newer)
    }

    /// Makes a result; the store makes these.
    package init(values: [Record], undecodable: [UndecodableRecord], writtenByNewerVersion: [Record.ID] = []) {
        self.values = values
        self.undecodable = undecodable
        self.writtenByNewerVersion = writtenByNewerVersion
    }
}
