import SyncJournalCore
import SyncJournalProtocol

/// The server applied an operation; `row` is its copy afterwards (a
/// tombstone for a delete), with the new server stamp.
package struct Acknowledgement: Sendable, Hashable {
    /// The applied operation.
    package var operationID: OperationID
    /// The server's copy after applying it.
    package var row: ServerRow

    /// Creates an acknowledgement.
    package init(operationID: OperationID, row: ServerRow) {
        self.operationID = operationID
        self.row = row
    }
}
