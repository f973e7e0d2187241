import SyncJournalProtocol

/// A question about the records of one kind: which ones (``filter(_:)``), in
/// what order (``order(_:)``), and how many (``limit(_:offset:)``).
///
/// ```swift
/// let page = Query("note")
///     .filter(Field("list") == "inbox")
///     .filter(Field("due") < 1_800_000_000)
///     .order(Field("due").ascending, Field("title"))
///     .limit(20, offset: 40)
/// ```
///
/// A query is a value: ask it with ``LocalStore/fetch(_:)``, ``LocalStore/fetchOne(_:)`` or
/// ``LocalStore/count(_:)``, or follow its results with ``LocalStore/observe(_:)``. Results are
/// the records as the app sees them (pending local edits included, deleted
/// records never), of every space unless ``within(_:)`` names one, and
/// records that tie in the order come by id, then space.
public struct Query: Sendable, Hashable {
    /// The kind asked about.
    public let kind: String
    /// The model whose shape the query sees: records stored by an older version are
    /// upgraded before they are filtered and ordered. Nil for an untyped query.
    package var schema: RecordSchema?
    /// The filters, all of which a result satisfies.
    package private(set) var conditions: [QueryCondition] = []
    /// The order, before the tie-break by id.
    package private(set) var orderings: [Field] = []
    /// The most results returned, `nil` for all.
    package private(set) var maximumCount: Int?
    /// How many results of the order are skipped first.
    package private(set) var offset = 0
    /// The one space whose records the query selects; `nil` (the default)
    /// selects the records of every space the device holds.
    public private(set) var space: SpaceID?

    /// Every record of `kind`, ordered by id.
    public init(_ kind: String) { self.kind = kind }

    /// A query about `kind` that sees records in `schema`'s shape.
    package init(_ kind: String, schema: RecordSchema?) {
        self.kind = kind
        self.schema = schema
    }

    /// This query, returning only records that also satisfy `condition`.
    public func filter(_ condition: QueryCondition) -> Query {
        var query = self
        query.conditions.append(condition)
        return query
    }

    /// This query, ordered by `fields` (each ascending unless written
    /// `Field("name").descending`), then by id. Replaces an earlier order.
    public func order(_ fields: Field...) -> Query {
        var query = self
        query.orderings = fields
        return query
    }

    /// This query, selecting only the records of `space`.
    ///
    /// ```swift
    /// let shared = try await store.fetch(Query("pin").within(weekendPins.id))
    /// let mine = try await store.fetch(Query("pin").within(.personal))
    /// ```
    public func within(_ space: SpaceID) -> Query {
        var query = self
        query.space = space
        return query
    }

    /// This query, returning at most `count` records after skipping the first `offset`.
    public func limit(_ count: Int, offset: Int = 0) -> Query {
        var query = self
        query.maximumCount = max(0, count)
        query.offset = max(0, offset)
        return query
    }
}
