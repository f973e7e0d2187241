/// A field of a kind the store keeps an index of (``LocalStore/Options/indexes``),
/// so that a query comparing it with a value reads only the records it returns
/// instead of every record of the kind.
///
/// ```swift
/// var options = LocalStore.Options()
/// options.indexes = [FieldIndex(kind: "note", field: "list")]
/// ```
public struct FieldIndex: Sendable, Hashable {
    /// The kind whose records are indexed.
    public let kind: String
    /// The field indexed.
    public let field: String

    /// An index of `field` over the records of `kind`.
    public init(kind: String, field: String) {
        self.kind = kind
        self.field = field
    }
}
