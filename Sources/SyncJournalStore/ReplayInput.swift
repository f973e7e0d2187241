/// What the replay fold takes for one record: a decoded event, or a merged
/// edit kept as bytes (``MergedEdit``). Made from the record alone, so it
/// may be made ahead of the fold, on another thread.
package enum ReplayInput: Sendable {
    /// The record's event; `nil` for a record that carries none.
    case event(StoreEvent?)
    /// A compacted edit that merged into an earlier queued operation.
    case merged(MergedEdit)
}
