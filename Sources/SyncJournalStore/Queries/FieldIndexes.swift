import SyncJournalProtocol

/// The store's indexes, by kind and field, over the visible state. Built
/// from the state when the store opens, then kept up to date record by
/// record as the visible state changes.
package struct FieldIndexes: Sendable {
    private var byKind: [String: [String: ValueIndex]] = [:]

    /// No indexes.
    package init() {}

    /// The indexes `declared`, filled from `state`.
    package init(_ declared: [FieldIndex], state: StoreState) {
        for index in declared where !index.kind.isEmpty { byKind[index.kind, default: [:]][index.field] = ValueIndex() }
        guard !byKind.isEmpty else { return }
        for key in state.snapshot.keys where byKind[key.kind] != nil { update(key, state.visibleFields(of: key)) }
        for key in state.outbox.keys where byKind[key.kind] != nil && state.snapshot[key] == nil {
            update(key, state.visibleFields(of: key))
        }
    }

    /// Whether any index exists.
    package var isEmpty: Bool { byKind.isEmpty }

    /// Whether `kind` has an index.
    package func covers(_ kind: String) -> Bool { byKind[kind] != nil }

    /// The index of `field` over `kind`, if there is one.
    package func index(kind: String, field: String) -> ValueIndex? { byKind[kind]?[field] }

    /// Any one index of `kind`: it holds every visible record of the kind.
    package func anyIndex(of kind: String) -> ValueIndex? { byKind[kind]?.values.first }

    /// Records that `key` now shows `fields` (`nil`: not visible).
    package mutating func update(_ key: RecordKey, _ fields: [String: FieldValue]?) {
        guard var indexes = byKind[key.kind] else { return }
        byKind[key.kind] = nil
        for field in Array(indexes.keys) {
            indexes[field]!.set(key, fields.map { $0[field] ?? .null })
        }
        byKind[key.kind] = indexes
    }
}
