import SyncJournalProtocol

/// One push request's operations as the store handed them over: journaled as
/// possibly sent, and in flight until ``LocalStore/endSending(_:outcomes:)``.
package struct SendingBatch: Sendable {
    /// The operations to hand to the transport, in queue order.
    package var operations: [OutboxOperation]
    /// Those that this hand-over marked sent for the first time, in queue
    /// order: an offline transport unsends exactly these
    /// (``LocalStore/withdrawSending(_:newlyMarked:)``). A list, not a set:
    /// it is looked into only when a request never left the device.
    package var newlyMarked: [OperationID]

    /// A batch of `operations`, of which `newlyMarked` were first marked sent by this hand-over.
    package init(operations: [OutboxOperation], newlyMarked: [OperationID]) {
        self.operations = operations
        self.newlyMarked = newlyMarked
    }

    /// Whether nothing was ready to send.
    package var isEmpty: Bool { operations.isEmpty }
}
