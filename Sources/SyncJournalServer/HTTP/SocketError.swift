import SyncJournalPlatform
import SyncJournalServerPlatform

/// A failed socket call: which call, its `errno` (or `getaddrinfo` code),
/// and the address or peer it was working on.
///
/// ```swift
/// do { try server.start() } catch { print(error) }   // "bind 127.0.0.1:8787: Address already in use (EADDRINUSE)"
/// ```
public struct SocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed (`socket`, `bind`, `listen`, `getaddrinfo`, `recv`, `send`, `poll`, …).
    public var call: String
    /// The `errno` it left (for `getaddrinfo`, its own error code).
    public var errno: Int32
    /// The address (`host:port`) or what the call was for.
    public var context: String

    /// Creates an error.
    ///
    /// ```swift
    /// let error = SocketError(call: "bind", errno: Errno.addressInUse.rawValue, context: "127.0.0.1:8787")
    /// ```
    public init(call: String, errno: Int32, context: String) {
        self.call = call
        self.errno = errno
        self.context = context
    }

    /// The same error with its `errno` given by name.
    package init(call: String, code: Errno, context: String) {
        self.init(call: call, errno: code.rawValue, context: context)
    }

    /// One line, such as `bind 127.0.0.1:8787: Address already in use (EADDRINUSE)`.
    public var description: String {
        let text = SocketSetupFailure.message(call: call, code: errno)
        return "\(call) \(context): \(text) (\(call == "getaddrinfo" ? "code \(errno)" : Errno(rawValue: errno).description))"
    }
}
