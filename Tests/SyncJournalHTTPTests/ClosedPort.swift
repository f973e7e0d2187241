#if canImport(Glibc)
import Glibc
#endif

/// A loopback port that refuses connections: a socket bound to it that never
/// listens, so the port stays reserved and a connect gets ECONNREFUSED.
final class ClosedPort: @unchecked Sendable {
    // @unchecked: the descriptor is written once, in init.
    let port: UInt16
    private let fd: Int32

    init() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }
}
