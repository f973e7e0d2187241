import Foundation

/// Whether the server takes an optional member of a request (a mutation's
/// `queuedAt`, `modelVersion`; the shared spaces of a pull, a wait, a
/// mutation or a read): assumed until it refuses the member once (a server
/// older than it), then never sent again by this transport.
final class OptionalMemberSupport: @unchecked Sendable {
    // @unchecked: `refused` is read and written only under `lock`.
    private let lock = NSLock()
    private var refused = false

    /// Whether pushes should carry the member.
    var isAssumed: Bool { lock.withLock { !refused } }

    /// Records that the server refused the member.
    func markRefused() { lock.withLock { refused = true } }
}
