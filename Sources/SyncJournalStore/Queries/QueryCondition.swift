import SyncJournalProtocol

/// What a record must satisfy to be among a query's results: a comparison
/// of a ``Field`` with a value, or conditions joined with `&&`, `||` and `!`.
///
/// ```swift
/// let urgent = Field("list") == "inbox" && (Field("priority") >= 2 || Field("due").isNull)
/// ```
public struct QueryCondition: Sendable, Hashable {
    /// The condition as a tree.
    package let term: Term

    package init(_ term: Term) { self.term = term }

    /// Both conditions hold.
    public static func && (lhs: QueryCondition, rhs: QueryCondition) -> QueryCondition { QueryCondition(.and(lhs.term, rhs.term)) }
    /// At least one of the conditions holds.
    public static func || (lhs: QueryCondition, rhs: QueryCondition) -> QueryCondition { QueryCondition(.or(lhs.term, rhs.term)) }
    /// The condition does not hold.
    public static prefix func ! (condition: QueryCondition) -> QueryCondition { QueryCondition(.not(condition.term)) }

    /// Whether a record with these fields satisfies the condition.
    package func matches(_ fields: [String: FieldValue]) -> Bool { term.matches(fields) }
}
