/// A stored row, live or a tombstone, the user who owns it, and the
/// operation that created it: what the push rules look at before they
/// change a record.
package struct OwnedRow: Sendable, Hashable {
    /// The row as stored.
    package var row: ServerRow
    /// The user whose record it is; only they may change it or pull it.
    package var owner: String
    /// The id of the create whose record this row is, kept through its
    /// updates and on the tombstone its delete leaves; `nil` for a row
    /// stored before servers kept it, or a tombstone of a record that never
    /// existed. A create resent after its id was forgotten finds its own id here.
    package var createdBy: String?

    /// Pairs a row with its owner and the create it comes from.
    package init(row: ServerRow, owner: String, createdBy: String? = nil) {
        self.row = row
        self.owner = owner
        self.createdBy = createdBy
    }
}
