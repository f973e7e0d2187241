import SyncJournalPlatform
import SyncJournalServerPlatform

/// A loopback port that refuses connections: a socket bound to it that never
/// listens, so the port stays reserved and a connect gets ECONNREFUSED.
final class ClosedPort: @unchecked Sendable {
    // @unchecked: the descriptor is written once, in init.
    let port: UInt16
    private let fd: Int32

    init() {
        // A test machine without a loopback socket cannot run these tests at all.
        let bound = try? SystemSocket.bindLoopback(listenBacklog: nil)
        fd = bound?.descriptor ?? -1
        port = bound?.port ?? 0
    }

    deinit { SystemSocket.close(fd) }
}
