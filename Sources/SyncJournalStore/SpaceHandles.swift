import SyncJournalPlatform
import SyncJournalProtocol

/// Every shared space this process has met, each under a small number, so a
/// queued operation keeps its space in a few bits of a word it already has
/// (its place in the outbox stays 80 bytes, and a queue holds 100,000)
/// instead of a 16-byte string. Handle 0 is the personal space.
///
/// The table only grows: a process meets at most the spaces its user
/// belongs to and has belonged to, far below the handles' range.
package enum SpaceHandles {
    /// The handles' range: 29 bits, beside an operation's kind and flag.
    package static let maximum: UInt32 = (1 << 29) - 1

    private struct Table {
        var spaces: [SpaceID] = [.personal]
        var handles: [SpaceID: UInt32] = [.personal: 0]
    }

    private static let table = Mutex(Table())

    /// The handle of `space`, given one the first time it is met.
    package static func handle(for space: SpaceID) -> UInt32 {
        if space.isPersonal { return 0 }
        return table.withLock { table in
            if let handle = table.handles[space] { return handle }
            // Past half a billion distinct spaces in one process: a bug in
            // the caller, not data (a user belongs to at most a thousand).
            precondition(UInt32(table.spaces.count) <= maximum, "more distinct spaces than a process can name")
            let handle = UInt32(table.spaces.count)
            table.spaces.append(space)
            table.handles[space] = handle
            return handle
        }
    }

    /// The space `handle` names (only handles this table gave out exist).
    package static func space(for handle: UInt32) -> SpaceID {
        if handle == 0 { return .personal }
        return table.withLock { $0.spaces[Int(handle)] }
    }
}
