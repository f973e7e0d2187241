import SyncJournalProtocol
extension LocalStore {
    /// One kind's share of a pulled page.
    package struct PulledKindPage: Sendable, Hashable {
        /// The kind.
        package var kind: String
        /// Its rows in the page.
        package var rows: [ServerRow]
        /// Its cursor after the page (`nil`: unchanged).
        package var cursor: PullCursor?

        /// Creates a kind's page.
        package init(kind: String, rows: [ServerRow], cursor: PullCursor?) {
            self.kind = kind
            self.rows = rows
            self.cursor = cursor
        }
    }
}
