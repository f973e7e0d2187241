/// The server's answer for one mutation of a push.
public struct MutationResult: Sendable, Hashable {
    /// The mutation's operation id.
    public var operationID: OperationID
    /// What happened.
    public var outcome: MutationOutcome

    /// Creates a result.
    public init(operationID: OperationID, outcome: MutationOutcome) {
        self.operationID = operationID
        self.outcome = outcome
    }
}
