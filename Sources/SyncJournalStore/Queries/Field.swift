import SyncJournalProtocol

/// A field of a record, named in a query: to compare it with a value, or to order by it.
///
/// ```swift
/// let soon = Query("note")
///     .filter(Field("list") == "inbox" && Field("due") < 1_800_000_000)
///     .order(Field("due").ascending, Field("title"))
/// ```
///
/// A field a record lacks reads as ``FieldValue/null``. Comparisons follow
/// the query order of field values: see <doc:QueriesAndObservation>.
public struct Field: Sendable, Hashable {
    /// The field's name.
    public let name: String
    /// Whether an ordering by this field runs from the largest value down.
    package let isDescending: Bool

    /// The field called `name`.
    public init(_ name: String) {
        self.name = name
        isDescending = false
    }

    private init(_ name: String, descending: Bool) {
        self.name = name
        isDescending = descending
    }

    /// This field, ordered from the smallest value up (the default).
    public var ascending: Field { Field(name, descending: false) }
    /// This field, ordered from the largest value down.
    public var descending: Field { Field(name, descending: true) }

    /// Records whose field is null or missing.
    public var isNull: QueryCondition { QueryCondition(.isNull(name)) }

    /// Records whose field is a string starting with `prefix` (compared by Unicode scalars).
    public func hasPrefix(_ prefix: String) -> QueryCondition { QueryCondition(.hasPrefix(name, prefix)) }

    /// Records whose field is a string containing `text`, or a string set with `text` as a member.
    public func contains(_ text: String) -> QueryCondition { QueryCondition(.contains(name, text)) }

    /// Records whose field equals `value` in the query order (so `1` matches `1.0`).
    public static func == (field: Field, value: FieldValue) -> QueryCondition { QueryCondition(.compare(field.name, .equal, value)) }
    /// Records whose field differs from `value` in the query order.
    public static func != (field: Field, value: FieldValue) -> QueryCondition { QueryCondition(.compare(field.name, .notEqual, value)) }
    /// Records whose field comes before `value` in the query order.
    public static func < (field: Field, value: FieldValue) -> QueryCondition { QueryCondition(.compare(field.name, .less, value)) }
    /// Records whose field comes before `value` or equals it.
    public static func <= (field: Field, value: FieldValue) -> QueryCondition { QueryCondition(.compare(field.name, .lessOrEqual, value)) }
    /// Records whose field comes after `value` in the query order.
    public static func > (field: Field, value: FieldValue) -> QueryCondition { QueryCondition(.compare(field.name, .greater, value)) }
    /// Records whose field comes after `value` or equals it.
    public static func >= (field: Field, value: FieldValue) -> QueryCondition { QueryCondition(.compare(field.name, .greaterOrEqual, value)) }
}
