import SyncJournalPlatform
import SyncJournalServerPlatform

/// The server's one I/O thread: a readiness queue (``EventPoller``: epoll or
/// kqueue) over the listening socket, every connection and a wake-up pipe.
/// It accepts, reads and parses requests, admits them (token, per-owner
/// limits), hands whole requests to the ``OwnerScheduler``'s workers, and
/// writes the answers they hand back through a ``ResponseHandle``. No
/// connection costs a thread; an idle one costs its state and buffers only.
///
/// Threads: ``run()`` on the loop thread; ``deliver(_:to:closing:)``,
/// ``requestStop()`` and ``requestCut()`` from any thread (through `inbox`).
final class EventLoop: @unchecked Sendable {
    // @unchecked: the mutable properties below `inbox` are touched only by
    // the loop thread inside run(); other threads use `inbox` (a Mutex) and
    // the wake-up pipe.

    /// Messages from other threads.
    private struct Inbox {
        var responses: [(connection: UInt64, delivery: Delivery)] = []
        var stop = false
        var cut = false
        /// A byte is in the wake-up pipe and not yet drained.
        var wakePending = false
    }

    /// What another thread hands over for one connection, in order.
    private enum Delivery {
        /// The answer to the request in progress.
        case response(HTTPResponse, closing: Bool)
        /// The request in progress is kept to be answered later.
        case park(answerOnStop: HTTPResponse, onClose: @Sendable () -> Void)
    }

    private let configuration: HTTPServerConfiguration
    private let responder: any HTTPResponder
    private let scheduler: OwnerScheduler
    private let poller: EventPoller
    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let connectionLimit: Int
    private let parser: HTTPRequestParser
    private let inbox = Mutex(Inbox())

    private var connections: [Int32: HTTPConnection] = [:]
    private var descriptors: [UInt64: Int32] = [:]
    private var perAddress: [String: Int] = [:]
    private var served = 0
    private var refusing = 0
    private var nextID: UInt64 = 1
    private var stopping = false
    private var acceptPausedUntil: Int64?
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// The most connections being refused (answered 503, lingering) at once;
    /// beyond it, refused connections are closed without an answer.
    private static let refusingLimit = 1_024
    private static let sweepMilliseconds: Int64 = 50

    init(configuration: HTTPServerConfiguration, responder: any HTTPResponder, scheduler: OwnerScheduler,
         poller: EventPoller, listener: Int32, wakeRead: Int32, wakeWrite: Int32, connectionLimit: Int) {
        self.configuration = configuration
        self.responder = responder
        self.scheduler = scheduler
        self.poller = poller
        self.listener = listener
        self.wakeRead = wakeRead
        self.wakeWrite = wakeWrite
        self.connectionLimit = connectionLimit
        parser = HTTPRequestParser(configuration: configuration)
    }

    deinit { scratch.deallocate() }

    // MARK: From any thread

    /// Queues `response` for connection `connection`; dropped if it has closed.
    func deliver(_ response: HTTPResponse, to connection: UInt64, closing: Bool) {
        post { $0.responses.append((connection, .response(response, closing: closing))) }
    }

    /// Marks connection `connection`'s request in progress as parked (see
    /// ``ResponseHandle/park(answerOnStop:onClose:)``); `onClose` runs at
    /// once, on the loop thread, if the connection has closed already.
    func park(_ connection: UInt64, answerOnStop: HTTPResponse, onClose: @escaping @Sendable () -> Void) {
        post { $0.responses.append((connection, .park(answerOnStop: answerOnStop, onClose: onClose))) }
    }

    /// Stop accepting, close idle connections, finish the rest, then end ``run()``.
    func requestStop() { post { $0.stop = true } }

    /// Close every connection now and end ``run()``.
    func requestCut() { post { $0.cut = true } }

    private func post(_ change: (inout Inbox) -> Void) {
        let wake = inbox.withLock { inbox -> Bool in
            change(&inbox)
            defer { inbox.wakePending = true }
            return !inbox.wakePending
        }
        if wake {
            _ = try? [UInt8(1)].withUnsafeBytes { bytes throws(Errno) in try SystemFile.write(wakeWrite, from: bytes) }
        }
    }

    // MARK: The loop thread

    /// Serves until stopped (and every connection has closed) or cut; closes the listener.
    func run() {
        var events: [ReadinessEvent] = []
        var lastSweep = MonotonicClock.milliseconds()
        while true {
            do throws(Errno) {
                try poller.wait(into: &events, milliseconds: Int32(Self.sweepMilliseconds))
            } catch {
                // EBADF or EINVAL would mean the queue itself is broken: nothing can be served.
                closeEverything()
                return
            }
            let now = MonotonicClock.milliseconds()
            for event in events {
                if event.descriptor == wakeRead {
                    drainWakeUps()
                    continue
                }
                if event.descriptor == listener {
                    if !stopping { acceptConnections(now: now) }
                    continue
                }
                guard let connection = connections[event.descriptor] else { continue }
                handle(event, on: connection, now: now)
            }
            let (responses, stop, cut) = takeInbox()
            if cut {
                closeEverything()
                return
            }
            if stop && !stopping { beginStopping() }
            for item in responses {
                guard let descriptor = descriptors[item.connection], let connection = connections[descriptor] else {
                    if case .park(_, let onClose) = item.delivery { onClose() }
                    continue
                }
                switch item.delivery {
                case .response(let response, let closing):
                    answered(connection, with: response, closing: closing, now: now)
                case .park(let answerOnStop, let onClose):
                    parked(connection, answerOnStop: answerOnStop, onClose: onClose, now: now)
                }
            }
            if now - lastSweep >= Self.sweepMilliseconds {
                sweep(now: now)
                lastSweep = now
            }
            if stopping && connections.isEmpty { return }
        }
    }

    private func takeInbox() -> ([(connection: UInt64, delivery: Delivery)], Bool, Bool) {
        let taken = inbox.withLock { inbox -> Inbox in
            let taken = inbox
            inbox.responses.removeAll()
            inbox.wakePending = false
            return taken
        }
        return (taken.responses, taken.stop, taken.cut)
    }

    /// Empties the (non-blocking) wake-up pipe; the inbox is read after.
    private func drainWakeUps() {
        while true {
            let count = (try? SystemFile.read(wakeRead, into: scratch)) ?? 0
            if count <= 0 { return }
        }
    }

    private func handle(_ event: ReadinessEvent, on connection: HTTPConnection, now: Int64) {
        if event.writable && connection.hasOutput { flush(connection, now: now) }
        if connection.isClosed { return }
        if case .working = connection.phase {
            // The peer is gone entirely (a reset or both directions closed): nobody to answer.
            if event.hangUp && !event.readable { close(connection) }
            return
        }
        if case .parked = connection.phase {
            if event.readable || event.hangUp { readWhileParked(connection) }
            return
        }
        if event.readable || event.hangUp { readInput(connection, now: now) }
    }

    // MARK: Accepting

    private func acceptConnections(now: Int64) {
        for _ in 0..<256 {
            let descriptor: Int32
            do throws(Errno) { descriptor = try SystemSocket.accept(listener) } catch {
                switch error {
                case .wouldBlock:
                    return
                case .interrupted, .connectionAborted, .protocolError:
                    continue
                default:
                    // Out of descriptors or memory: stop accepting for a moment instead of spinning.
                    try? poller.change(listener, readable: false, writable: false)
                    acceptPausedUntil = now + 100
                    return
                }
            }
            try? SystemSocket.setNonBlocking(descriptor)
            SystemSocket.setNoDelay(descriptor)
            let address = SystemSocket.peerAddress(descriptor) ?? "unknown"
            var refusal: HTTPRequestFailure?
            if served >= connectionLimit {
                refusal = .tooManyConnections(limit: connectionLimit)
            } else if perAddress[address, default: 0] >= configuration.maximumConnectionsPerAddress {
                refusal = .tooManyConnectionsFromAddress(limit: configuration.maximumConnectionsPerAddress)
            }
            if refusal != nil && refusing >= Self.refusingLimit {
                SystemSocket.close(descriptor)
                continue
            }
            let connection = HTTPConnection(id: nextID, socket: ConnectionSocket(descriptor: descriptor), address: address,
                                            counted: refusal == nil, now: now)
            nextID += 1
            do throws(Errno) { try poller.watch(descriptor, readable: true, writable: false) } catch {
                SystemSocket.close(descriptor)
                continue
            }
            connections[descriptor] = connection
            descriptors[connection.id] = descriptor
            if let refusal {
                refusing += 1
                refuse(connection, refusal, now: now)
            } else {
                served += 1
                perAddress[address, default: 0] += 1
            }
        }
    }

    // MARK: Reading

    private func readInput(_ connection: HTTPConnection, now: Int64) {
        if case .lingering = connection.phase {
            discardInput(connection)
            return
        }
        switch connection.socket.read(into: scratch) {
        case .moved(let count):
            connection.input.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
            advance(connection, now: now)
        case .wouldBlock:
            return
        case .endOfFile, .failed:
            // End of file before a whole request, or a reset: nobody to answer.
            close(connection)
        }
    }

    /// Reads from a parked connection: an end of file or a reset closes it
    /// (its keeper is told); bytes of a next request are kept for after the
    /// answer, up to one request head's worth.
    private func readWhileParked(_ connection: HTTPConnection) {
        while !connection.isClosed {
            switch connection.socket.read(into: scratch) {
            case .moved(let count):
                connection.input.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
                if connection.input.count > configuration.maximumRequestLineBytes + configuration.maximumHeaderBytes {
                    close(connection)
                }
            case .wouldBlock:
                return
            case .endOfFile, .failed:
                close(connection)
            }
        }
    }

    private func discardInput(_ connection: HTTPConnection) {
        while true {
            switch connection.socket.read(into: scratch) {
            case .moved(let count):
                connection.discarded += count
                if connection.discarded > configuration.maximumLingerBytes {
                    close(connection)
                    return
                }
            case .wouldBlock:
                return
            case .endOfFile, .failed:
                close(connection)
                return
            }
        }
    }

    /// Consumes what `input` holds: empty lines, a head, a body; stops when
    /// more bytes are needed or a request went to a worker.
    private func advance(_ connection: HTTPConnection, now: Int64) {
        while !connection.isClosed {
            switch connection.phase {
            case .head:
                let skipped = HTTPRequestParser.leadingEmptyLines(connection.input)
                if skipped > 0 {
                    connection.input.removeFirst(skipped)
                    connection.emptyLines += skipped / 2
                    if connection.requestStart == nil { connection.requestStart = now }
                    if connection.emptyLines > configuration.maximumEmptyLines {
                        refuse(connection, .malformed("more than \(configuration.maximumEmptyLines) empty lines before a request line"), now: now)
                        return
                    }
                }
                if connection.input.isEmpty { return }
                if connection.requestStart == nil { connection.requestStart = now }
                let head: HTTPRequestParser.Head
                switch parser.parseHead(connection.input) {
                case .incomplete:
                    return
                case .failure(let failure):
                    refuse(connection, failure, now: now)
                    return
                case .head(let parsed):
                    head = parsed
                }
                switch responder.admit(head.request) {
                case .answer(let response):
                    answerLast(connection, response, now: now)
                    return
                case .proceed(let owner):
                    let key = owner ?? ""
                    if let reason = scheduler.reserve(owner: key, bytes: head.contentLength) {
                        refuse(connection, .ownerBusy(reason), now: now)
                        return
                    }
                    connection.reservation = (key, head.contentLength)
                    connection.phase = .body(head, owner: key)
                    // Room for the whole request at once: grown by doubling, the
                    // buffer would reach twice a large body, through copies.
                    connection.input.reserveCapacity(head.length + head.contentLength)
                    if head.expectsContinue && connection.input.count < head.length + head.contentLength {
                        queueOutput(connection, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), now: now)
                    }
                }
            case .body(let head, let owner):
                let total = head.length + head.contentLength
                guard connection.input.count >= total else { return }
                var request = head.request
                if connection.input.count == total {
                    // The buffer holds this request alone: it becomes the body
                    // in place (the head moved out of its front), not a copy of it.
                    var body = connection.input
                    connection.input = []
                    body.removeFirst(head.length)
                    request.body = body
                } else {
                    request.body = Array(connection.input[head.length..<total])
                    connection.input.removeFirst(total)
                    // An idle connection keeps no buffer: a large body's capacity is given back.
                    if connection.input.isEmpty { connection.input = [] }
                }
                connection.phase = .working
                connection.emptyLines = 0
                setReadable(connection, false)
                let bytes = connection.reservation?.bytes ?? 0
                connection.reservation = nil
                let handle = ResponseHandle(loop: self, connection: connection.id, requestWantsClose: request.wantsClose)
                let responder = responder
                let whole = request
                let respond: @Sendable (ResponseHandle) -> HTTPResponse?
                if let parking = responder as? any ParkingResponder {
                    respond = { handle in parking.respond(to: whole, handle: handle) }
                } else {
                    respond = { _ in responder.respond(to: whole) }
                }
                scheduler.submit(OwnerScheduler.Job(owner: owner, bytes: bytes, respond: respond, handle: handle))
                return
            case .working, .parked, .lingering:
                return
            }
        }
    }

    // MARK: Answering

    /// A worker's (or a parked request's) answer has come back.
    private func answered(_ connection: HTTPConnection, with response: HTTPResponse, closing: Bool, now: Int64) {
        switch connection.phase {
        case .working, .parked: break
        case .head, .body, .lingering: return
        }
        let last = closing || stopping
        if last {
            connection.phase = .lingering(until: now + Int64(configuration.writeTimeoutMilliseconds + configuration.lingerMilliseconds))
            connection.input = []
            setReadable(connection, true)
            queueOutput(connection, response.serialized(closing: true), now: now, closeAfter: true)
            return
        }
        connection.phase = .head
        connection.requestStart = nil
        connection.idleSince = now
        queueOutput(connection, response.serialized(closing: false), now: now)
        guard !connection.isClosed else { return }
        setReadable(connection, true)
        advance(connection, now: now)
    }

    /// A worker kept the request in progress to answer later: read the
    /// connection meanwhile (to see the peer go), and answer at once if the
    /// server is stopping.
    private func parked(_ connection: HTTPConnection, answerOnStop: HTTPResponse, onClose: @escaping @Sendable () -> Void, now: Int64) {
        guard case .working = connection.phase else {
            // Answered already (the answer came first): nothing is kept.
            return
        }
        connection.phase = .parked(answerOnStop: answerOnStop, onClose: onClose)
        if stopping {
            onClose()
            answered(connection, with: answerOnStop, closing: true, now: now)
            return
        }
        setReadable(connection, true)
    }

    /// Answers a request the HTTP layer refuses (503 and 429 with `Retry-After`), then closes.
    private func refuse(_ connection: HTTPConnection, _ failure: HTTPRequestFailure, now: Int64) {
        var response = responder.respond(to: failure)
        if (failure.status == 503 || failure.status == 429) && !response.headers.contains(where: { $0.hasName("retry-after") }) {
            response.headers.append(HTTPHeader(name: "Retry-After", value: String(configuration.retryAfterSeconds)))
        }
        answerLast(connection, response, now: now)
    }

    /// Writes a last answer without reading further, then lingers and closes:
    /// input still arriving is read and discarded (bounded), so the close
    /// does not reset the connection and destroy the answer.
    private func answerLast(_ connection: HTTPConnection, _ response: HTTPResponse, now: Int64) {
        releaseReservation(connection)
        connection.phase = .lingering(until: now + Int64(configuration.writeTimeoutMilliseconds + configuration.lingerMilliseconds))
        connection.input = []
        setReadable(connection, true)
        queueOutput(connection, response.serialized(closing: true), now: now, closeAfter: true)
    }

    private func queueOutput(_ connection: HTTPConnection, _ bytes: [UInt8], now: Int64, closeAfter: Bool = false) {
        if connection.hasOutput {
            connection.output.append(contentsOf: bytes)
        } else {
            connection.output = bytes
            connection.outputOffset = 0
            connection.outputSince = now
        }
        if closeAfter { connection.closeAfterOutput = true }
        flush(connection, now: now)
    }

    private func flush(_ connection: HTTPConnection, now: Int64) {
        while connection.hasOutput {
            switch connection.socket.write(connection.output, from: connection.outputOffset) {
            case .moved(let count):
                connection.outputOffset += count
            case .wouldBlock:
                setWritable(connection, true)
                return
            case .endOfFile, .failed:
                close(connection)
                return
            }
        }
        connection.output = []
        connection.outputOffset = 0
        setWritable(connection, false)
        if connection.closeAfterOutput {
            connection.closeAfterOutput = false
            SystemSocket.shutdown(connection.socket.descriptor, .write)
            connection.phase = .lingering(until: now + Int64(configuration.lingerMilliseconds))
        }
    }

    // MARK: Timeouts, stopping, closing

    /// Applies the deadlines: header and read timeouts (408), idle
    /// keep-alive, write timeout, the end of lingering.
    private func sweep(now: Int64) {
        if let until = acceptPausedUntil, now >= until, !stopping {
            acceptPausedUntil = nil
            try? poller.change(listener, readable: true, writable: false)
        }
        let headLimit = Int64(min(configuration.headerTimeoutMilliseconds, configuration.readTimeoutMilliseconds))
        let readLimit = Int64(configuration.readTimeoutMilliseconds)
        var expired: [(HTTPConnection, HTTPRequestFailure?)] = []
        for connection in connections.values {
            if connection.hasOutput && now - connection.outputSince >= Int64(configuration.writeTimeoutMilliseconds) {
                expired.append((connection, nil))
                continue
            }
            switch connection.phase {
            case .head:
                if let start = connection.requestStart {
                    if now - start >= headLimit { expired.append((connection, .timeout(milliseconds: Int(headLimit)))) }
                } else if now - connection.idleSince >= Int64(configuration.idleTimeoutMilliseconds) {
                    expired.append((connection, nil))
                }
            case .body:
                if let start = connection.requestStart, now - start >= readLimit {
                    expired.append((connection, .timeout(milliseconds: Int(readLimit))))
                }
            case .lingering(let until):
                if now >= until { expired.append((connection, nil)) }
            case .working, .parked:
                break
            }
        }
        for (connection, failure) in expired where !connection.isClosed {
            if let failure { refuse(connection, failure, now: now) } else { close(connection) }
        }
    }

    private func beginStopping() {
        stopping = true
        poller.forget(listener)
        SystemSocket.close(listener)
        // Idle connections (nothing of a request received) close now; parked
        // requests are answered now; the rest finish.
        for connection in Array(connections.values) {
            if case .head = connection.phase, connection.input.isEmpty, !connection.hasOutput { close(connection) }
            if case .parked(let answerOnStop, let onClose) = connection.phase {
                onClose()
                answered(connection, with: answerOnStop, closing: true, now: MonotonicClock.milliseconds())
            }
        }
    }

    private func closeEverything() {
        if !stopping {
            poller.forget(listener)
            SystemSocket.close(listener)
            stopping = true
        }
        for connection in Array(connections.values) {
            SystemSocket.shutdown(connection.socket.descriptor, .readWrite)
            close(connection)
        }
    }

    private func releaseReservation(_ connection: HTTPConnection) {
        if let reservation = connection.reservation {
            scheduler.release(owner: reservation.owner, bytes: reservation.bytes)
            connection.reservation = nil
        }
    }

    private func close(_ connection: HTTPConnection) {
        guard !connection.isClosed else { return }
        connection.isClosed = true
        if case .parked(_, let onClose) = connection.phase { onClose() }
        releaseReservation(connection)
        let descriptor = connection.socket.descriptor
        poller.forget(descriptor)
        SystemSocket.close(descriptor)
        connections[descriptor] = nil
        descriptors[connection.id] = nil
        if connection.counted {
            served -= 1
            let remaining = perAddress[connection.address, default: 1] - 1
            perAddress[connection.address] = remaining > 0 ? remaining : nil
        } else {
            refusing -= 1
        }
    }

    private func setReadable(_ connection: HTTPConnection, _ readable: Bool) {
        guard connection.watchingReadable != readable, !connection.isClosed else { return }
        connection.watchingReadable = readable
        try? poller.change(connection.socket.descriptor, readable: readable, writable: connection.watchingWritable)
    }

    private func setWritable(_ connection: HTTPConnection, _ writable: Bool) {
        guard connection.watchingWritable != writable, !connection.isClosed else { return }
        connection.watchingWritable = writable
        try? poller.change(connection.socket.descriptor, readable: connection.watchingReadable, writable: writable)
    }
}
