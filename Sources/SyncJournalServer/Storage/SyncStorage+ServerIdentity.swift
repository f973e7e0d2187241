import SyncJournalProtocol

/// Storages from before identities (and test doubles): no identity, and
/// expectations ignored.
extension SyncStorage {
    /// Ignores the expectation and pushes (a storage without an identity).
    public func push(user: String, _ mutations: [Mutation], expecting expectation: ServerExpectation?) throws(StorageError) -> [MutationResult] {
        try push(user: user, mutations)
    }

    /// None.
    public var identity: ServerIdentity? { nil }
}
