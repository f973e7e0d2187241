import Foundation
import SyncJournalPlatform
import SyncJournalServerPlatform

/// One kept-alive HTTP/1.1 connection to a sync-server, with blocking
/// socket calls on the calling thread (`sync-load --client plain`).
///
/// A load generator on the server's own machine takes CPU from the server.
/// URLSession on Linux runs each request through libcurl and several
/// threads; this sends the request in one `send` and reads the reply with
/// `recv`, so the same cores measure more of the server. It speaks only
/// what sync-server answers: a status line, headers and a
/// `Content-Length` body. Any failure closes the connection; the next
/// request opens a new one.
///
/// ```swift
/// let connection = PlainHTTPConnection(host: "127.0.0.1", port: 8787, token: "dev-token", timeoutMilliseconds: 30_000)
/// let reply = try connection.post("/v1/sync/pull", body: Array(#"{"cursors":{"pin":null},"limit":1}"#.utf8))
/// ```
final class PlainHTTPConnection {
    private let host: String
    private let port: Int
    private let headerPrefix: [UInt8]
    private let timeoutMilliseconds: Int
    private var descriptor: Int32?
    /// Bytes received after the last reply (none with one request in flight, but kept rather than lost).
    private var pending: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// A connection to `host`:`port`, sending `token`; opened at the first request.
    init(host: String, port: Int, token: String, timeoutMilliseconds: Int) {
        self.host = host
        self.port = port
        self.timeoutMilliseconds = timeoutMilliseconds
        headerPrefix = Array("Host: \(host):\(port)\r\nAuthorization: Bearer \(token)\r\nAccept: application/json\r\nContent-Type: application/json\r\n".utf8)
    }

    deinit { close() }

    /// Closes the connection (the next request opens another).
    func close() {
        if let descriptor { SystemSocket.close(descriptor) }
        descriptor = nil
        pending.removeAll()
    }

    /// Posts `body` to `path` and returns the status and body of the reply.
    ///
    /// - Throws: ``PlainHTTPFailure`` when the connection fails or the reply
    ///   is not one this client reads; the connection is then closed.
    func post(_ path: String, body: [UInt8]) throws(PlainHTTPFailure) -> (status: Int, body: [UInt8]) {
        do throws(PlainHTTPFailure) {
            let socket = try open()
            var request = Array("POST \(path) HTTP/1.1\r\n".utf8)
            request.reserveCapacity(request.count + headerPrefix.count + 40 + body.count)
            request += headerPrefix
            request += Array("Content-Length: \(body.count)\r\n\r\n".utf8)
            request += body
            try send(request, on: socket)
            return try readReply(on: socket)
        } catch {
            close()
            throw error
        }
    }

    private func open() throws(PlainHTTPFailure) -> Int32 {
        if let descriptor { return descriptor }
        let opened: Int32
        do throws(SocketSetupFailure) { opened = try SystemSocket.connectTCP(host: host, port: port) } catch {
            throw .connect(reason: "\(error.call): \(SocketSetupFailure.message(call: error.call, code: error.code))")
        }
        SystemSocket.setNoDelay(opened)
        SystemSocket.setReceiveTimeout(opened, milliseconds: timeoutMilliseconds)
        SystemSocket.setSendTimeout(opened, milliseconds: timeoutMilliseconds)
        descriptor = opened
        return opened
    }

    private func send(_ bytes: [UInt8], on socket: Int32) throws(PlainHTTPFailure) {
        var offset = 0
        while offset < bytes.count {
            let sent: Result<Int, Errno> = bytes.withUnsafeBytes { all in
                do throws(Errno) { return .success(try SystemSocket.send(socket, from: UnsafeRawBufferPointer(rebasing: all[offset...]))) } catch {
                    return .failure(error)
                }
            }
            switch sent {
            case .success(let count) where count > 0: offset += count
            case .success: throw .closed(during: "sending the request")
            case .failure(let error): throw .socket(call: "send", error)
            }
        }
    }

    /// Receives more bytes into ``pending``.
    private func receiveMore(on socket: Int32, during step: String) throws(PlainHTTPFailure) {
        let received: Result<Int, Errno> = buffer.withUnsafeMutableBytes { space in
            do throws(Errno) { return .success(try SystemSocket.receive(socket, into: space)) } catch { return .failure(error) }
        }
        switch received {
        case .success(let count) where count > 0: pending += buffer[0..<count]
        case .success: throw .closed(during: step)
        case .failure(let error): throw .socket(call: "recv", error)
        }
    }

    private func readReply(on socket: Int32) throws(PlainHTTPFailure) -> (status: Int, body: [UInt8]) {
        var headEnd: Int?
        var searchFrom = 0
        while headEnd == nil {
            if let end = Self.headEnd(in: pending, from: searchFrom) {
                headEnd = end
                break
            }
            searchFrom = max(0, pending.count - 3)
            guard pending.count < 64 * 1024 else { throw .malformedReply("a reply head over 64 KiB") }
            try receiveMore(on: socket, during: "reading the reply head")
        }
        guard let headEnd else { throw .malformedReply("no reply head") }
        let head = String(decoding: pending[0..<headEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusWords = lines.first.map { $0.split(separator: " ", maxSplits: 2) } ?? []
        guard statusWords.count >= 2, statusWords[0].hasPrefix("HTTP/1."), let status = Int(statusWords[1]) else {
            throw .malformedReply("status line \"\(lines.first ?? "")\"")
        }
        var length: Int?
        var closes = false
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch name {
            case "content-length":
                guard let parsed = Int(value), parsed >= 0 else { throw .malformedReply("Content-Length \"\(value)\"") }
                length = parsed
            case "transfer-encoding":
                throw .malformedReply("Transfer-Encoding \(value), which this client does not read")
            case "connection":
                closes = value.lowercased() == "close"
            default:
                break
            }
        }
        guard let length else { throw .malformedReply("no Content-Length") }
        let bodyStart = headEnd + 4
        while pending.count < bodyStart + length { try receiveMore(on: socket, during: "reading the reply body") }
        let body = Array(pending[bodyStart..<(bodyStart + length)])
        pending.removeFirst(bodyStart + length)
        if closes { close() }
        return (status, body)
    }

    /// Where `\r\n\r\n` starts in `bytes`, looking from `start`.
    private static func headEnd(in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = start
        while index + 3 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 { return index }
            index += 1
        }
        return nil
    }
}
