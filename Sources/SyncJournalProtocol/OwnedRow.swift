/// A stored row, live or a tombstone, and the user who owns it: what the
/// push rules look at before they change a record.
package struct OwnedRow: Sendable, Hashable {
    /// The row as stored.
    package var row: ServerRow
    /// The user whose record it is; only they may change it or pull it.
    package var owner: String

    /// Pairs a row with its owner.
    package init(row: ServerRow, owner: String) {
        self.row = row
        self.owner = owner
    }
}
