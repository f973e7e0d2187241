#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SyncJournalPlatform

/// Why ``SystemSocket/listen(host:port:backlog:)`` found no address to
/// listen on: the call that failed last and its code (an `errno`, or for
/// `getaddrinfo` that function's own error code).
package struct SocketSetupFailure: Error, Sendable, Hashable {
    /// `getaddrinfo`, `socket`, `bind` or `listen`.
    package var call: String
    /// The `errno` (or `getaddrinfo` code) it left.
    package var code: Int32

    /// Creates a failure of `call` with `code`.
    package init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// The platform's text for `code` as returned by `call`: `gai_strerror`
    /// for `getaddrinfo`, `strerror` for every other call.
    package static func message(call: String, code: Int32) -> String {
        call == "getaddrinfo" ? String(cString: gai_strerror(code)) : Errno(rawValue: code).message
    }
}
