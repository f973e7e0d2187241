import Foundation
import SyncJournalPlatform
import SyncJournalServerPlatform

/// A loopback HTTP/1.1 responder for transport tests: it listens on
/// 127.0.0.1 on a port the kernel picks, reads each request in full, records
/// it, and answers with the next scripted ``Reply`` (one request per
/// connection), or with what its handler returns. A held request stays
/// unanswered until ``releaseHeld()`` or ``stop()``; nothing here sleeps.
final class ScriptedHTTPResponder: @unchecked Sendable {
    // @unchecked: mutable state is guarded by `lock`; sockets are owned by one thread each.

    /// What to do with one request.
    enum Reply: Sendable {
        /// Answer with a status, extra headers and a body (with its Content-Length).
        case respond(status: Int, headers: [(String, String)] = [], body: [UInt8] = [])
        /// Send nothing until the test releases it (or the responder stops), then close.
        case hold
        /// Close the connection without a reply.
        case close
        /// Send the status line, headers announcing `announced` body bytes, only `body`, then close.
        case closeMidReply(status: Int, announced: Int, body: [UInt8])

        /// A 200 with a JSON body.
        static func ok(_ body: [UInt8]) -> Reply { .respond(status: 200, headers: [("Content-Type", "application/json")], body: body) }
    }

    /// One request as it arrived.
    struct Request: Sendable {
        var method: String
        var path: String
        /// Header names lowercased, in arrival order.
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        func header(_ name: String) -> String? { headers.first { $0.name == name.lowercased() }?.value }
    }

    let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var script: [Reply]
    private let handler: (@Sendable (Request) async -> Reply)?
    private var received: [Request] = []
    private var heldSockets: [Int32] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    private var stopped = false
    private let acceptLoopDone = DispatchSemaphore(value: 0)

    /// The URL of the responder's root.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The requests received so far, in order.
    var requests: [Request] { lock.withLock { received } }

    /// Starts listening; each request takes the next reply of `script` (a 500 when it runs out).
    convenience init(_ script: [Reply]) throws {
        try self.init(script: script, handler: nil)
    }

    /// Starts listening; each request is answered with what `handler` returns for it.
    convenience init(handler: @escaping @Sendable (Request) async -> Reply) throws {
        try self.init(script: [], handler: handler)
    }

    private init(script: [Reply], handler: (@Sendable (Request) async -> Reply)?) throws {
        self.script = script
        self.handler = handler
        let (fd, boundPort) = try SystemSocket.bindLoopback(listenBacklog: 16)
        listener = fd
        port = boundPort
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Returns once `count` requests have arrived (their replies may still be pending).
    func waitUntilReceived(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isReady = lock.withLock { () -> Bool in
                if received.count >= count { return true }
                waiters.append((count, continuation))
                return false
            }
            if isReady { continuation.resume() }
        }
    }

    /// Answers held requests' waits: each held connection is closed.
    func releaseHeld() {
        let sockets = lock.withLock { () -> [Int32] in
            defer { heldSockets = [] }
            return heldSockets
        }
        for socket in sockets { SystemSocket.shutdown(socket, .readWrite) }
    }

    /// Stops listening, closes held connections and waits for the accept loop to end.
    func stop() {
        let alreadyStopped = lock.withLock { () -> Bool in
            defer { stopped = true }
            return stopped
        }
        if alreadyStopped { return }
        releaseHeld()
        // shutdown wakes the thread blocked in accept(); close alone may not.
        SystemSocket.shutdown(listener, .readWrite)
        acceptLoopDone.wait()
        SystemSocket.close(listener)
    }

    deinit { stop() }

    private func acceptLoop() {
        defer { acceptLoopDone.signal() }
        while true {
            let connection: Int32
            do throws(Errno) { connection = try SystemSocket.accept(listener) } catch {
                if error == .interrupted { continue }
                return
            }
            if lock.withLock({ stopped }) {
                SystemSocket.close(connection)
                return
            }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        guard let request = readRequest(connection) else {
            SystemSocket.close(connection)
            return
        }
        let (reply, ready) = lock.withLock { () -> (Reply, [CheckedContinuation<Void, Never>]) in
            received.append(request)
            let ready = waiters.filter { $0.count <= received.count }.map(\.continuation)
            waiters.removeAll { $0.count <= received.count }
            let reply = script.isEmpty ? .respond(status: 500, body: Array(#"{"error":"internal","message":"script ran out"}"#.utf8)) : script.removeFirst()
            return (reply, ready)
        }
        for continuation in ready { continuation.resume() }
        switch handler.map({ Self.wait(for: $0, request) }) ?? reply {
        case .respond(let status, let headers, let body):
            var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            write(connection, Array(head.utf8) + body)
            SystemSocket.close(connection)
        case .hold:
            let isStopped = lock.withLock { () -> Bool in
                if !stopped { heldSockets.append(connection) }
                return stopped
            }
            if isStopped { SystemSocket.close(connection); return }
            // Wait for the peer to give up or for releaseHeld()/stop() to shut the socket down.
            var scratch = [UInt8](repeating: 0, count: 256)
            while Self.receive(connection, into: &scratch) > 0 {}
            lock.withLock { heldSockets.removeAll { $0 == connection } }
            SystemSocket.close(connection)
        case .close:
            SystemSocket.close(connection)
        case .closeMidReply(let status, let announced, let body):
            let head = "HTTP/1.1 \(status) \(Self.reason(status))\r\nContent-Length: \(announced)\r\nContent-Type: application/json\r\n\r\n"
            write(connection, Array(head.utf8) + body)
            SystemSocket.close(connection)
        }
    }

    /// Runs the async handler from this connection's own thread (never a
    /// thread of the concurrency pool), which waits for it.
    private static func wait(for handler: @escaping @Sendable (Request) async -> Reply, _ request: Request) -> Reply {
        let done = DispatchSemaphore(value: 0)
        let box = ReplyBox()
        Task {
            box.reply = await handler(request)
            done.signal()
        }
        done.wait()
        return box.reply ?? .close
    }

    private final class ReplyBox: @unchecked Sendable {
        // @unchecked: written once before the semaphore is signalled, read after the wait.
        var reply: Reply?
    }

    private func write(_ connection: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { (try? SystemSocket.send(connection, from: $0)) ?? -1 }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// One receive into `chunk`: the bytes read, 0 at end of file, -1 on an error.
    private static func receive(_ connection: Int32, into chunk: inout [UInt8]) -> Int {
        chunk.withUnsafeMutableBytes { (try? SystemSocket.receive(connection, into: $0)) ?? -1 }
    }

    /// Reads the head and a Content-Length body; answers `Expect: 100-continue` first.
    private func readRequest(_ connection: Int32) -> Request? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            let count = Self.receive(connection, into: &chunk)
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
            if buffer.count >= 4 {
                headEnd = (0...(buffer.count - 4)).first { buffer[$0..<($0 + 4)].elementsEqual(separator) }
            }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var request = Request(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers, body: [])
        if request.header("expect")?.lowercased() == "100-continue" { write(connection, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
        let length = Int(request.header("content-length") ?? "0") ?? 0
        var body = Array(buffer[(headEnd! + 4)...])
        while body.count < length {
            let count = Self.receive(connection, into: &chunk)
            if count <= 0 { return nil }
            body.append(contentsOf: chunk[..<count])
        }
        request.body = body
        return request
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 410: return "Gone"
        case 413: return "Content Too Large"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }
}
