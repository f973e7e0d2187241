import SyncJournalProtocol
extension LocalStore {
    /// One kind's share, in one space, of a pulled page.
    package struct PulledKindPage: Sendable, Hashable {
        /// The kind.
        package var kind: String
        /// The space the rows are of.
        package var space: SpaceID
        /// Its rows in the page.
        package var rows: [ServerRow]
        /// Its cursor after the page (`nil`: unchanged).
        package var cursor: PullCursor?

        /// Creates a kind's page.
        package init(kind: String, rows: [ServerRow], cursor: PullCursor?, space: SpaceID = .personal) {
            self.kind = kind
            self.space = space
            self.rows = rows
            self.cursor = cursor
        }
    }
}
