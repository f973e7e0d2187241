#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import SyncJournalPlatform

/// A small HTTP/1.1 server on plain sockets: one thread accepts, one thread
/// per connection reads, calls the ``HTTPResponder`` and writes (blocking
/// I/O stays off the Swift concurrency pool). Content-Length bodies only,
/// keep-alive and pipelining, limits from ``HTTPServerConfiguration``.
///
/// ```swift
/// let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0), responder: router)
/// try server.start()
/// print("listening on \(server.port)")
/// server.shutdown()   // stop accepting, let requests in flight finish, close
/// ```
public final class HTTPServer: Sendable {
    /// The configuration the server was made with.
    public let configuration: HTTPServerConfiguration
    private let responder: any HTTPResponder

    private struct State {
        var wakeRead: Int32 = -1
        var wakeWrite: Int32 = -1
        var port = 0
        var started = false
        var stopping = false
        /// Descriptors of the connections being served (cut after the grace period).
        var connections: Set<Int32> = []
    }
    private let state = Mutex(State())
    /// Entered by the accept thread and by each connection thread.
    private let running = DispatchGroup()

    /// A server that will answer with `responder`; nothing listens until ``start()``.
    ///
    /// ```swift
    /// let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 8787), responder: router)
    /// ```
    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder) {
        self.configuration = configuration
        self.responder = responder
    }

    /// The port listened on (the one picked when the configuration said 0); 0 before ``start()``.
    ///
    /// ```swift
    /// let url = "http://127.0.0.1:\(server.port)/v1/health"
    /// ```
    public var port: Int { state.withLock { $0.port } }

    /// Binds, listens and starts accepting on a thread of its own.
    ///
    /// ```swift
    /// try server.start()
    /// ```
    ///
    /// - Throws: ``SocketError`` when the address cannot be resolved or bound
    ///   (in use, not local, no permission), or the server was started before
    ///   (`EALREADY`; a stopped server is not restarted, make a new one).
    public func start() throws(SocketError) {
        let claimed = state.withLock { state -> Bool in
            guard !state.started else { return false }
            state.started = true
            return true
        }
        guard claimed else { throw SocketError(call: "start", errno: EALREADY, context: "\(configuration.host):\(configuration.port)") }
        let listener: Int32
        do throws(SocketError) {
            listener = try Self.listen(host: configuration.host, port: configuration.port)
        } catch {
            state.withLock { $0.started = false }
            throw error
        }
        var pipeEnds: [Int32] = [-1, -1]
        // pipe2 and accept4 are not exported by the Glibc module: flags are set right after.
        guard pipe(&pipeEnds) == 0 else {
            let failure = errno
            _ = Glibc.close(listener)
            state.withLock { $0.started = false }
            throw SocketError(call: "pipe", errno: failure, context: "wake-up pipe")
        }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        let wakeRead = pipeEnds[0], wakeWrite = pipeEnds[1]
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let port = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        } == 0 ? Self.port(of: address) : configuration.port
        state.withLock { state in
            state.wakeRead = wakeRead
            state.wakeWrite = wakeWrite
            state.port = port
        }
        running.enter()
        let thread = Thread { [self] in
            acceptLoop(listener: listener, wake: wakeRead)
            running.leave()
        }
        thread.name = "sync-server accept"
        thread.start()
    }

    /// Stops accepting, lets requests in flight finish (each answered with
    /// `Connection: close`), closes idle connections, and returns when every
    /// connection is closed. Connections still busy after the grace period
    /// are cut. Calling it again does nothing.
    ///
    /// ```swift
    /// server.shutdown()
    /// ```
    public func shutdown() {
        let wakeWrite = state.withLock { state -> Int32? in
            guard state.started, !state.stopping else { return nil }
            state.stopping = true
            return state.wakeWrite
        }
        guard let wakeWrite else { return }
        // Never drained: every poll on the read end sees it from now on.
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
        if running.wait(timeout: .now() + .milliseconds(configuration.shutdownGraceMilliseconds)) == .timedOut {
            state.withLock { state in
                for descriptor in state.connections { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }
            }
            running.wait()
        }
        state.withLock { state in
            _ = Glibc.close(state.wakeRead)
            _ = Glibc.close(state.wakeWrite)
            state.wakeRead = -1
            state.wakeWrite = -1
        }
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func acceptLoop(listener: Int32, wake: Int32) {
        defer { _ = Glibc.close(listener) }
        while true {
            var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { return }
            let descriptor = accept(listener, nil, nil)
            if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
            if descriptor < 0 {
                switch errno {
                case EINTR, EAGAIN, ECONNABORTED, EPROTO:
                    continue
                default:
                    // Out of descriptors or memory: wait a little (or for shutdown) instead of spinning.
                    var wakeOnly = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
                    _ = poll(&wakeOnly, 1, 100)
                    continue
                }
            }
            serve(descriptor)
        }
    }

    private func serve(_ descriptor: Int32) {
        let socket = ConnectionSocket(descriptor: descriptor)
        let admitted = state.withLock { state -> Bool in
            guard state.connections.count < configuration.maximumConnections else { return false }
            state.connections.insert(descriptor)
            return true
        }
        guard admitted else {
            // Written without waiting (a fresh socket's send buffer holds it),
            // so a flood of refused clients costs neither threads nor time.
            let refusal = responder.respond(to: .tooManyConnections(limit: configuration.maximumConnections))
            try? socket.write(refusal.serialized(closing: true), flags: Int32(MSG_DONTWAIT))
            _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
            socket.close()
            return
        }
        running.enter()
        let connection = HTTPConnection(socket: socket, configuration: configuration, responder: responder,
                                        wake: state.withLock { $0.wakeRead },
                                        isStopping: { [self] in isStopping })
        let thread = Thread { [self] in
            connection.run()
            // run() closed the descriptor; forget it under the lock shutdown cuts connections with.
            state.withLock { _ = $0.connections.remove(descriptor) }
            running.leave()
        }
        thread.name = "sync-server connection"
        thread.start()
    }

    private static func port(of address: sockaddr_storage) -> Int {
        var copy = address
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &copy) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) } }
        case AF_INET6:
            return withUnsafePointer(to: &copy) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) } }
        default:
            return 0
        }
    }

    /// A listening socket on the first address of `host` that binds.
    private static func listen(host: String, port: Int) throws(SocketError) -> Int32 {
        let context = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        guard (0...65_535).contains(port) else { throw SocketError(call: "bind", errno: EINVAL, context: context) }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0, let list else { throw SocketError(call: "getaddrinfo", errno: code, context: context) }
        defer { freeaddrinfo(list) }
        var failure = SocketError(call: "bind", errno: EADDRNOTAVAIL, context: context)
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            let descriptor = socket(current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), current.pointee.ai_protocol)
            guard descriptor >= 0 else {
                failure = SocketError(call: "socket", errno: errno, context: context)
                continue
            }
            var on: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            if bind(descriptor, current.pointee.ai_addr, current.pointee.ai_addrlen) != 0 {
                failure = SocketError(call: "bind", errno: errno, context: context)
                _ = Glibc.close(descriptor)
                continue
            }
            if Glibc.listen(descriptor, 128) != 0 {
                failure = SocketError(call: "listen", errno: errno, context: context)
                _ = Glibc.close(descriptor)
                continue
            }
            return descriptor
        }
        throw failure
    }
}
