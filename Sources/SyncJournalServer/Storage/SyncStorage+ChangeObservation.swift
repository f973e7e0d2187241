extension SyncStorage {
    /// A storage without change notifications never calls `observer`: waits
    /// for changes then end only by their first check or their timeout.
    public func observeChanges(_ observer: @escaping @Sendable (StorageChange) -> Void) {}

    /// Nothing to stop.
    public func stopObservingChanges() {}
}
