/// What the store's queries cost, counted: how often one read every record
/// of its kind, and how many records they examined in all.
package struct QueryWork: Sendable, Hashable {
    /// Queries that read every record of their kind.
    package var kindScans = 0
    /// Records whose fields a query checked.
    package var recordsExamined = 0

    package init() {}
}
