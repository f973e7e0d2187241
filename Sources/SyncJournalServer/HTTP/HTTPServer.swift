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
        guard claimed else { throw SocketError(call: "start", code: .alreadyInProgress, context: "\(configuration.host):\(configuration.port)") }
        let listener: Int32
        do throws(SocketError) {
            listener = try Self.listen(host: configuration.host, port: configuration.port)
        } catch {
            state.withLock { $0.started = false }
            throw error
        }
        let wakeRead: Int32, wakeWrite: Int32
        do throws(Errno) {
            (wakeRead, wakeWrite) = try SystemPipe.make()
        } catch {
            SystemSocket.close(listener)
            state.withLock { $0.started = false }
            throw SocketError(call: "pipe", code: error, context: "wake-up pipe")
        }
        let port = SystemSocket.localPort(listener) ?? configuration.port
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
        _ = try? [UInt8(1)].withUnsafeBytes { bytes throws(Errno) in try SystemFile.write(wakeWrite, from: bytes) }
        if running.wait(timeout: .now() + .milliseconds(configuration.shutdownGraceMilliseconds)) == .timedOut {
            state.withLock { state in
                for descriptor in state.connections { SystemSocket.shutdown(descriptor, .readWrite) }
            }
            running.wait()
        }
        state.withLock { state in
            SystemSocket.close(state.wakeRead)
            SystemSocket.close(state.wakeWrite)
            state.wakeRead = -1
            state.wakeWrite = -1
        }
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func acceptLoop(listener: Int32, wake: Int32) {
        defer { SystemSocket.close(listener) }
        while true {
            let ready: [Bool]
            do throws(Errno) { ready = try SystemSocket.pollForInput([listener, wake], milliseconds: -1) } catch {
                if error == .interrupted { continue }
                return
            }
            if ready[1] { return }
            let descriptor: Int32
            do throws(Errno) { descriptor = try SystemSocket.accept(listener) } catch {
                switch error {
                case .interrupted, .wouldBlock, .connectionAborted, .protocolError:
                    continue
                default:
                    // Out of descriptors or memory: wait a little (or for shutdown) instead of spinning.
                    _ = try? SystemSocket.pollForInput([wake], milliseconds: 100)
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
            try? socket.write(refusal.serialized(closing: true), dontWait: true)
            SystemSocket.shutdown(descriptor, .write)
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

    /// A listening socket on the first address of `host` that binds.
    private static func listen(host: String, port: Int) throws(SocketError) -> Int32 {
        let context = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        do throws(SocketSetupFailure) { return try SystemSocket.listen(host: host, port: port, backlog: 128) } catch {
            throw SocketError(call: error.call, errno: error.code, context: context)
        }
    }
}
