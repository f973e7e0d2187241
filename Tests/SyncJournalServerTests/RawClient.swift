import Foundation
import SyncJournalPlatform
import SyncJournalServerPlatform

/// A test client that writes bytes to a loopback socket itself and reads
/// raw responses, so tests can send what no HTTP library would.
final class RawClient {
    let descriptor: Int32

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// One response as read from the socket.
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    }

    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`; reads give up after `timeoutSeconds` (a test never hangs).
    init(port: Int, timeoutSeconds: Int = 10) throws {
        do throws(Errno) { descriptor = try SystemSocket.connectLoopback(port: UInt16(port)) } catch {
            throw Failure(description: "connect: \(error)")
        }
        SystemSocket.setReceiveTimeout(descriptor, milliseconds: timeoutSeconds * 1_000)
        SystemSocket.setSendTimeout(descriptor, milliseconds: timeoutSeconds * 1_000)
    }

    deinit { SystemSocket.close(descriptor) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let result: Result<Int, Errno> = bytes.withUnsafeBytes { buffer in
                do throws(Errno) { return .success(try SystemSocket.send(descriptor, from: UnsafeRawBufferPointer(rebasing: buffer[offset...]))) } catch { return .failure(error) }
            }
            switch result {
            case .success(let count): offset += count
            case .failure(let error): throw Failure(description: "send: \(error)")
            }
        }
    }

    /// Stops sending (the server sees end of file).
    func finishSending() { SystemSocket.shutdown(descriptor, .write) }

    /// Closes with a reset (SO_LINGER 0), as a crashed client would.
    func reset() {
        SystemSocket.setResetOnClose(descriptor)
        SystemSocket.shutdown(descriptor, .readWrite)
    }

    /// Reads more bytes; `false` at end of file.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let result: Result<Int, Errno> = chunk.withUnsafeMutableBytes { bytes in
            do throws(Errno) { return .success(try SystemSocket.receive(descriptor, into: bytes)) } catch { return .failure(error) }
        }
        switch result {
        case .success(let count):
            guard count > 0 else { return false }
            buffer += chunk[0..<count]
            return true
        case .failure(let error):
            if error == .connectionReset { return false }
            throw Failure(description: "recv: \(error) (a timeout is \(Errno.wouldBlock))")
        }
    }

    /// Reads one whole response (head and Content-Length body).
    func readResponse() throws -> Response {
        while true {
            if let end = headEnd() {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "bad status line: \(head)") }
                let headers = lines.compactMap { line -> (String, String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
                if status == 100 {
                    buffer.removeFirst(end + 4)
                    return Response(status: 100, headers: headers, body: [])
                }
                let length = Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
                while buffer.count < end + 4 + length {
                    guard try fill() else { throw Failure(description: "end of file inside a body") }
                }
                let body = Array(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                return Response(status: status, headers: headers, body: body)
            }
            guard try fill() else { throw Failure(description: "end of file before a response (\(buffer.count) bytes)") }
        }
    }

    /// Whether a response (or end of file) is readable within `milliseconds`:
    /// a bounded wait for a socket event, never a pause.
    func hasInput(withinMilliseconds milliseconds: Int32) throws -> Bool {
        if !buffer.isEmpty { return true }
        do throws(Errno) { return try SystemSocket.pollForInput([descriptor], milliseconds: milliseconds)[0] } catch {
            if error == .interrupted { return false }
            throw Failure(description: "poll: \(error)")
        }
    }

    /// Whether the server closed the connection (reads to end of file; other bytes are an error).
    func readsEndOfFile() throws -> Bool {
        if !buffer.isEmpty { return false }
        return try !fill()
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }
}
