import SyncJournalCore
import SyncJournalProtocol

/// The server applied an operation; `row` is its copy afterwards (a
/// tombstone for a delete), with the new server stamp.
public struct Acknowledgement: Sendable, Hashable {
    /// The applied operation.
    public var operationID: OperationID
    /// The server's copy after applying it.
    public var row: ServerRow

    /// Creates an acknowledgement.
    public init(operationID: OperationID, row: ServerRow) {
        self.operationID = operationID
        self.row = row
    }
}
