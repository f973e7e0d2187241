import SyncJournalProtocol
import SyncJournalWire

extension SQLiteStorage: EncodedPushStorage {
    /// Applies `mutations` in order in one transaction, as
    /// ``push(user:_:expecting:)`` does, with their fields and the rows'
    /// kept in the field codec's encoding from the body to the database
    /// and back into the results.
    package func pushEncoded(user: String, _ mutations: [EncodedMutation],
                             expecting expectation: ServerExpectation?) throws(StorageError) -> [EncodedMutationResult] {
        let retention = operationRetention
        let identity = self.identity
        let results = try writeTransaction { (queries) throws(StorageError) -> [EncodedMutationResult] in
            try Self.refuseUnexpected(expectation, identity: identity, queries)
            let pushedAt = queries.now()
            var results: [EncodedMutationResult] = []
            results.reserveCapacity(mutations.count)
            for pushed in mutations {
                let operationID = pushed.mutation.operationID
                if let first = try queries.rememberedEncoded(owner: user, operationID: operationID) {
                    results.append(EncodedMutationResult(operationID: operationID, outcome: .applied(first)))
                    continue
                }
                let forgotten = retention?.mayBeForgotten(pushed.mutation, at: pushedAt) ?? false
                let outcome = try EncodedPushRules.apply(pushed, user: user, mayBeForgotten: forgotten, queries)
                // Only an applied result changed anything; a refusal is judged afresh on a resend.
                if case .applied(let row) = outcome {
                    try queries.remember(owner: user, operationID: operationID, row: row, in: pushed.mutation.space, at: pushedAt)
                }
                results.append(EncodedMutationResult(operationID: operationID, outcome: outcome))
            }
            return results
        }
        // Committed: waits for this user's changes may end now.
        for change in StorageChange.changes(user: user, mutations: mutations, results: results) { notifyObserver(change) }
        return results
    }
}
