/// Where a storage keeps a row: its key and the owner column
/// (``StorageRules/owner(in:user:)``: the user in the personal space, empty
/// in a shared one).
package struct RowAddress: Sendable, Hashable {
    /// The record's space, kind and id.
    package var key: RecordKey
    /// The user whose personal space holds it; empty in a shared space.
    package var owner: String

    /// The address of `key` held by `owner`.
    package init(key: RecordKey, owner: String) {
        self.key = key
        self.owner = owner
    }
}
