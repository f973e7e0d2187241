#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SyncJournalPlatform

/// Thin wrappers over the BSD socket calls the HTTP server and its tests
/// use, on raw descriptor numbers. No call ever raises `SIGPIPE`: sends pass
/// `MSG_NOSIGNAL` on Linux, and sockets get `SO_NOSIGPIPE` on Darwin, which
/// has no such flag.
package enum SystemSocket {
    /// Which directions ``shutdown(_:_:)`` closes.
    package enum Direction: Sendable {
        /// Stop sending (the peer reads end of file).
        case write
        /// Stop both sending and receiving.
        case readWrite
    }

    /// A stream socket listening on the first address of `host` (a name or
    /// a numeric IPv4 or IPv6 address) that binds, with `SO_REUSEADDR`.
    package static func listen(host: String, port: Int, backlog: Int32 = 128) throws(SocketSetupFailure) -> Int32 {
        guard (0...65_535).contains(port) else { throw SocketSetupFailure(call: "bind", code: Errno.invalidArgument.rawValue) }
        return try firstSocket(host: host, port: port, passive: true, failing: "bind") { descriptor, address in
            var on: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            if bind(descriptor, address.ai_addr, address.ai_addrlen) != 0 { return SocketSetupFailure(call: "bind", code: errno) }
            if systemListen(descriptor, backlog) != 0 { return SocketSetupFailure(call: "listen", code: errno) }
            return nil
        }
    }

    /// A TCP socket bound to 127.0.0.1:`port` (0: a free port the kernel
    /// picks), listening with `backlog` unless it is `nil` (then connects to
    /// the port are refused while the port stays reserved). Returns the
    /// descriptor and the bound port.
    package static func bindLoopback(port: UInt16 = 0, listenBacklog backlog: Int32?) throws(Errno) -> (descriptor: Int32, port: UInt16) {
        let descriptor = try open(family: AF_INET, type: streamType, protocol: 0)
        var address = loopbackAddress(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound != 0 || (backlog.map { systemListen(descriptor, $0) != 0 } ?? false) {
            let code = Errno.current
            try? SystemFile.close(descriptor)
            throw code
        }
        return (descriptor, UInt16(localPort(descriptor) ?? 0))
    }

    /// A TCP socket connected to 127.0.0.1:`port`.
    package static func connectLoopback(port: UInt16) throws(Errno) -> Int32 {
        let descriptor = try open(family: AF_INET, type: streamType, protocol: 0)
        var address = loopbackAddress(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = Errno.current
            try? SystemFile.close(descriptor)
            throw code
        }
        return descriptor
    }

    /// A TCP socket connected to `host`:`port` (a name or a numeric
    /// address; the first address that accepts), blocking, close-on-exec.
    package static func connectTCP(host: String, port: Int) throws(SocketSetupFailure) -> Int32 {
        try firstSocket(host: host, port: port, passive: false, failing: "connect") { descriptor, address in
            systemConnect(descriptor, address.ai_addr, address.ai_addrlen) != 0 ? SocketSetupFailure(call: "connect", code: errno) : nil
        }
    }

    /// Resolves `host`:`port` and returns a stream socket on the first of its
    /// addresses that `setUp` accepts (returning nil); a socket it refuses is
    /// closed. Throws the last failure, or `failing` with no usable address.
    private static func firstSocket(host: String, port: Int, passive: Bool, failing call: String,
                                    _ setUp: (Int32, addrinfo) -> SocketSetupFailure?) throws(SocketSetupFailure) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        if passive { hints.ai_flags = AI_PASSIVE }
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0, let list else { throw SocketSetupFailure(call: "getaddrinfo", code: code) }
        defer { freeaddrinfo(list) }
        var failure = SocketSetupFailure(call: call, code: Errno.addressNotAvailable.rawValue)
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            let descriptor: Int32
            do throws(Errno) {
                descriptor = try open(family: current.pointee.ai_family, type: current.pointee.ai_socktype, protocol: current.pointee.ai_protocol)
            } catch {
                failure = SocketSetupFailure(call: "socket", code: error.rawValue)
                continue
            }
            if let refused = setUp(descriptor, current.pointee) {
                failure = refused
                try? SystemFile.close(descriptor)
                continue
            }
            return descriptor
        }
        throw failure
    }

    /// Makes calls on `descriptor` return ``Errno/wouldBlock`` instead of
    /// waiting (`O_NONBLOCK`), for sockets served by an ``EventPoller``.
    package static func setNonBlocking(_ descriptor: Int32) throws(Errno) {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else { throw .current }
    }

    /// The peer's address without its port (`127.0.0.1`, `::1`), from
    /// `getpeername`, or `nil` (a peer already gone, not an IP socket).
    package static func peerAddress(_ descriptor: Int32) -> String? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard result == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let converted: UnsafePointer<CChar>?
        switch Int32(address.ss_family) {
        case AF_INET:
            converted = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                    withUnsafePointer(to: inet.pointee.sin_addr) { inet_ntop(AF_INET, $0, &text, socklen_t(text.count)) }
                }
            }
        case AF_INET6:
            converted = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet in
                    withUnsafePointer(to: inet.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &text, socklen_t(text.count)) }
                }
            }
        default:
            return nil
        }
        guard converted != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The local port a socket is bound to (`getsockname`), or `nil`.
    package static func localPort(_ descriptor: Int32) -> Int? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0 else { return nil }
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) } }
        case AF_INET6:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) } }
        default:
            return nil
        }
    }

    /// One `accept(2)`, close-on-exec. Not retried: the caller decides what
    /// `EINTR`, `EAGAIN` or `ECONNABORTED` mean for its loop.
    package static func accept(_ listener: Int32) throws(Errno) -> Int32 {
        let descriptor = systemAccept(listener)
        guard descriptor >= 0 else { throw .current }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        suppressBrokenPipeSignal(descriptor)
        return descriptor
    }

    /// One `recv(2)`, retrying `EINTR`; 0 at end of file.
    package static func receive(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try SystemFile.retryingInterrupts { recv(descriptor, base, buffer.count, 0) }
    }

    /// One `send(2)`, retrying `EINTR`, never raising `SIGPIPE`; returns
    /// the bytes sent, which may be fewer. `dontWait` sends only what fits
    /// in the socket's buffer now (`MSG_DONTWAIT`).
    package static func send(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer, dontWait: Bool = false) throws(Errno) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let flags = noSignalFlag | (dontWait ? Int32(MSG_DONTWAIT) : 0)
        return try SystemFile.retryingInterrupts { systemSend(descriptor, base, buffer.count, flags) }
    }

    /// `shutdown(2)`; errors (a peer already gone) are ignored.
    package static func shutdown(_ descriptor: Int32, _ direction: Direction) {
        _ = systemShutdown(descriptor, direction == .write ? Int32(SHUT_WR) : Int32(SHUT_RDWR))
    }

    /// Closes `descriptor`, ignoring errors (a socket has nothing left to flush).
    package static func close(_ descriptor: Int32) {
        try? SystemFile.close(descriptor)
    }

    /// Bounds each wait of a blocking send (`SO_SNDTIMEO`).
    package static func setSendTimeout(_ descriptor: Int32, milliseconds: Int) {
        setTimeout(descriptor, SO_SNDTIMEO, milliseconds: milliseconds)
    }

    /// Bounds each wait of a blocking receive (`SO_RCVTIMEO`): a timed-out
    /// receive fails with ``Errno/wouldBlock``.
    package static func setReceiveTimeout(_ descriptor: Int32, milliseconds: Int) {
        setTimeout(descriptor, SO_RCVTIMEO, milliseconds: milliseconds)
    }

    /// Turns off Nagle's delay (`TCP_NODELAY`), for replies written whole.
    package static func setNoDelay(_ descriptor: Int32) {
        var on: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Makes the next close reset the connection (`SO_LINGER` with 0), as a
    /// crashed peer would.
    package static func setResetOnClose(_ descriptor: Int32) {
        var value = linger()
        value.l_onoff = 1
        value.l_linger = 0
        _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
    }

    /// One `poll(2)` for input on `descriptors`, waiting at most
    /// `milliseconds` (-1: no limit). Returns, for each descriptor, whether
    /// it has input, end of file or a hang-up; all `false` after a timeout.
    /// Not retried on `EINTR`: the caller recomputes its deadline.
    package static func pollForInput(_ descriptors: [Int32], milliseconds: Int32) throws(Errno) -> [Bool] {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let count = poll(&entries, nfds_t(entries.count), milliseconds)
        if count < 0 { throw .current }
        return entries.map { $0.revents != 0 }
    }

    private static func open(family: Int32, type: Int32, protocol number: Int32) throws(Errno) -> Int32 {
        #if canImport(Darwin)
        let descriptor = socket(family, type, number)
        guard descriptor >= 0 else { throw .current }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        suppressBrokenPipeSignal(descriptor)
        return descriptor
        #else
        let descriptor = socket(family, type | cloexecType, number)
        guard descriptor >= 0 else { throw .current }
        return descriptor
        #endif
    }

    /// Darwin has no `MSG_NOSIGNAL`: the socket itself is told (`SO_NOSIGPIPE`).
    private static func suppressBrokenPipeSignal(_ descriptor: Int32) {
        #if canImport(Darwin)
        var on: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    private static func setTimeout(_ descriptor: Int32, _ option: Int32, milliseconds: Int) {
        var timeout = timeval()
        timeout.tv_sec = time_t(milliseconds / 1_000)
        timeout.tv_usec = suseconds_t((milliseconds % 1_000) * 1_000)
        _ = setsockopt(descriptor, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func loopbackAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let cloexecType = Int32(SOCK_CLOEXEC.rawValue)
    private static let noSignalFlag = Int32(MSG_NOSIGNAL)
    #elseif canImport(Musl)
    private static let streamType = Int32(SOCK_STREAM)
    private static let cloexecType = Int32(SOCK_CLOEXEC)
    private static let noSignalFlag = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let noSignalFlag: Int32 = 0
    #endif
}

// The C calls under names no wrapper shadows.
private func systemListen(_ descriptor: Int32, _ backlog: Int32) -> Int32 { listen(descriptor, backlog) }
private func systemAccept(_ listener: Int32) -> Int32 { accept(listener, nil, nil) }
private func systemSend(_ descriptor: Int32, _ base: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    send(descriptor, base, count, flags)
}
private func systemConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(descriptor, address, length)
}
private func systemShutdown(_ descriptor: Int32, _ how: Int32) -> Int32 { shutdown(descriptor, how) }
