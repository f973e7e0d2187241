/// A key a ``PartitionedMap`` can place in one of its parts cheaply: its
/// `partitionBits` are spread well in their top bits and cost less than a
/// full hash (the part's own dictionary hashes the key once more).
package protocol PartitionKey: Hashable, Sendable {
    /// Bits whose top ones name the key's part.
    var partitionBits: UInt64 { get }
}
