import Dispatch
import SyncJournalPlatform
import SyncJournalServerPlatform

/// A small HTTP/1.1 server on non-blocking sockets: one event-loop thread
/// (``EventLoop``: epoll on Linux, kqueue on Darwin) holds every connection
/// and does all the reading, parsing and writing; a few worker threads call
/// the ``HTTPResponder`` (which may block on a database), fair between
/// users (``OwnerScheduler``). Content-Length bodies only, keep-alive and
/// pipelining, limits from ``HTTPServerConfiguration``.
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

    private struct Running: @unchecked Sendable {
        // @unchecked: PlatformThread is joined only by shutdown(), under the state lock's hand-off.
        var loop: EventLoop
        var loopThread: PlatformThread
        var workers: [PlatformThread]
        var scheduler: OwnerScheduler
        var wakeRead: Int32
        var wakeWrite: Int32
    }

    private struct State {
        var port = 0
        var started = false
        var stopped = false
        var running: Running?
    }
    private let state = Mutex(State())
    /// Signalled when the event loop's thread ends.
    private let loopEnded = DispatchSemaphore(value: 0)

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

    /// The most connections served at once: the configured maximum, lowered
    /// to fit the open-file limit (raised to its hard limit by ``start()``)
    /// with 128 descriptors spare. 0 before ``start()``.
    public var connectionLimit: Int { state.withLock { $0.running.map { _ in effectiveConnectionLimit() } ?? 0 } }

    /// Raises the open-file limit, binds, listens and starts the event loop
    /// and the workers on threads of their own.
    ///
    /// ```swift
    /// try server.start()
    /// ```
    ///
    /// - Throws: ``SocketError`` when the address cannot be resolved or bound
    ///   (in use, not local, no permission), a thread or the readiness queue
    ///   cannot be made, or the server was started before (`EALREADY`; a
    ///   stopped server is not restarted, make a new one).
    public func start() throws(SocketError) {
        let claimed = state.withLock { state -> Bool in
            guard !state.started else { return false }
            state.started = true
            return true
        }
        guard claimed else { throw SocketError(call: "start", code: .alreadyInProgress, context: "\(configuration.host):\(configuration.port)") }
        do throws(SocketError) {
            let running = try launch()
            state.withLock { $0.running = running }
        } catch {
            state.withLock { $0.started = false }
            throw error
        }
    }

    private func launch() throws(SocketError) -> Running {
        OpenFileLimit.raiseToHardLimit()
        let listener = try Self.listen(host: configuration.host, port: configuration.port)
        var cleanup: [Int32] = [listener]
        func fail(_ call: String, _ error: Errno, _ context: String) -> SocketError {
            for descriptor in cleanup { SystemSocket.close(descriptor) }
            return SocketError(call: call, code: error, context: context)
        }
        let wakeRead: Int32, wakeWrite: Int32
        let poller: EventPoller
        do throws(Errno) {
            try SystemSocket.setNonBlocking(listener)
            (wakeRead, wakeWrite) = try SystemPipe.make()
            cleanup += [wakeRead, wakeWrite]
            try SystemSocket.setNonBlocking(wakeRead)
            try SystemSocket.setNonBlocking(wakeWrite)
            poller = try EventPoller()
            try poller.watch(listener, readable: true, writable: false)
            try poller.watch(wakeRead, readable: true, writable: false)
        } catch {
            throw fail("event loop setup", error, "\(configuration.host):\(configuration.port)")
        }
        let port = SystemSocket.localPort(listener) ?? configuration.port
        state.withLock { $0.port = port }
        let scheduler = OwnerScheduler(configuration: configuration)
        let loop = EventLoop(configuration: configuration, responder: responder, scheduler: scheduler, poller: poller,
                             listener: listener, wakeRead: wakeRead, wakeWrite: wakeWrite,
                             connectionLimit: effectiveConnectionLimit())
        var workers: [PlatformThread] = []
        let workerCount = max(1, configuration.workerThreads)
        for _ in 0..<workerCount {
            guard let worker = PlatformThread.start({
                while let job = scheduler.next() { scheduler.run(job) }
            }) else {
                scheduler.close(workers: workerCount)
                for started in workers { started.join() }
                throw fail("pthread_create", .noMemory, "worker thread")
            }
            workers.append(worker)
        }
        let ended = loopEnded
        guard let loopThread = PlatformThread.start({
            loop.run()
            ended.signal()
        }) else {
            scheduler.close(workers: workerCount)
            for started in workers { started.join() }
            throw fail("pthread_create", .noMemory, "event loop thread")
        }
        return Running(loop: loop, loopThread: loopThread, workers: workers, scheduler: scheduler, wakeRead: wakeRead, wakeWrite: wakeWrite)
    }

    private func effectiveConnectionLimit() -> Int {
        guard let limit = OpenFileLimit.current() else { return configuration.maximumConnections }
        let fitting = Int(clamping: limit.soft) - 128
        return max(1, min(configuration.maximumConnections, fitting))
    }

    /// Stops accepting, lets requests in flight finish (each answered with
    /// `Connection: close`), closes idle connections, and returns when every
    /// connection is closed and every worker has finished. Connections still
    /// busy after the grace period are cut. Calling it again does nothing.
    ///
    /// ```swift
    /// server.shutdown()
    /// ```
    public func shutdown() {
        let running = state.withLock { state -> Running? in
            guard !state.stopped, let running = state.running else { return nil }
            state.stopped = true
            return running
        }
        guard let running else { return }
        running.loop.requestStop()
        if loopEnded.wait(timeout: .now() + .milliseconds(configuration.shutdownGraceMilliseconds)) == .timedOut {
            running.loop.requestCut()
            loopEnded.wait()
        }
        running.loopThread.join()
        running.scheduler.close(workers: running.workers.count)
        for worker in running.workers { worker.join() }
        SystemSocket.close(running.wakeRead)
        SystemSocket.close(running.wakeWrite)
    }

    /// A listening socket on the first address of `host` that binds.
    private static func listen(host: String, port: Int) throws(SocketError) -> Int32 {
        let context = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        do throws(SocketSetupFailure) { return try SystemSocket.listen(host: host, port: port, backlog: 1_024) } catch {
            throw SocketError(call: error.call, errno: error.code, context: context)
        }
    }
}
