import Dispatch
import Foundation
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalTesting
import SyncJournalWire
import Testing
@testable import SyncJournalServer

@Suite("limits no client can exhaust")
struct ServerLimitsTests {
    let responder = EchoResponder()

    func start(_ change: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.maximumBodyBytes = 1_000
        configuration.maximumHeaderBytes = 2_000
        change(&configuration)
        let server = HTTPServer(configuration: configuration, responder: responder)
        try server.start()
        return server
    }

    static let get = "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test("a head trickled byte by byte after an empty line is 408 at the header deadline, which the bytes do not extend")
    func trickledHeadTimesOut() throws {
        let server = try start { $0.headerTimeoutMilliseconds = 300 }
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        try client.send("\r\n")
        // One byte at a time, looking for an answer between bytes: were the
        // deadline extended by each byte, the head would reach the 2,000-byte
        // limit (431) instead.
        let trickle = Array("GET /echo HTTP/1.1\r\nX-Slow: ".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 3_000)
        var sent = 0
        while sent < trickle.count, try !client.hasInput(withinMilliseconds: 20) {
            try client.send([trickle[sent]])
            sent += 1
        }
        let response = try client.readResponse()
        #expect(response.status == 408 && response.text == "request_timeout")
        #expect(response.header("connection") == "close")
        #expect(try client.readsEndOfFile())
        #expect(responder.requests.withLock { $0 } == 0)
    }

    @Test("a new connection that sends nothing is 408 at the header deadline and closed")
    func silentConnectionTimesOut() throws {
        let server = try start { $0.headerTimeoutMilliseconds = 200 }
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        #expect(try client.readResponse().status == 408)
        #expect(try client.readsEndOfFile())
    }

    @Test("a kept-alive connection silent past the idle timeout is closed without an answer")
    func idleKeepAliveCloses() throws {
        let server = try start { $0.idleTimeoutMilliseconds = 200 }
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        try client.send(Self.get)
        #expect(try client.readResponse().status == 200)
        #expect(try client.readsEndOfFile())
    }

    @Test("empty lines before a request are skipped however TCP splits them; one over the limit is 400")
    func emptyLines() throws {
        let server = try start { $0.maximumEmptyLines = 3 }
        defer { server.shutdown() }
        let whole = try RawClient(port: server.port)
        try whole.send("\r\n\r\n\r\n" + Self.get)
        #expect(try whole.readResponse().status == 200)
        let split = try RawClient(port: server.port)
        for piece in ["\r", "\n\r", "\n", "\r\n"] {
            try split.send(piece)
            // The server must not answer a piece of an empty line (a bounded wait for a wrong answer).
            #expect(try !split.hasInput(withinMilliseconds: 20))
        }
        try split.send(Self.get)
        #expect(try split.readResponse().status == 200)
        let tooMany = try RawClient(port: server.port)
        for _ in 0..<4 { try tooMany.send("\r"); try tooMany.send("\n") }
        let refused = try tooMany.readResponse()
        #expect(refused.status == 400)
        #expect(try tooMany.readsEndOfFile())
    }

    @Test("the HTTP/2 prior-knowledge preface is 505 HTTP Version Not Supported, delivered before the close")
    func http2Preface() throws {
        let server = try start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        // The preface, then an empty SETTINGS frame, as curl --http2-prior-knowledge sends them.
        try client.send(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0])
        let response = try client.readResponse()
        #expect(response.status == 505 && response.text == "http_version_not_supported")
        #expect(try client.readsEndOfFile())
    }

    @Test("connections over the per-address limit get a 503 with Retry-After they can read, even while sending a body")
    func perAddressLimit() throws {
        let server = try start {
            $0.maximumConnectionsPerAddress = 2
            $0.maximumBodyBytes = 1 << 20
        }
        defer { server.shutdown() }
        let first = try RawClient(port: server.port)
        let second = try RawClient(port: server.port)
        try first.send(Self.get)
        try second.send(Self.get)
        #expect(try first.readResponse().status == 200)
        #expect(try second.readResponse().status == 200)
        // The third sends a whole 512 KiB request before reading: the server
        // must read and discard it rather than reset the connection, which
        // would destroy its answer.
        let third = try RawClient(port: server.port)
        let body = String(repeating: "b", count: 512 * 1024)
        try third.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let refused = try third.readResponse()
        #expect(refused.status == 503 && refused.text == "unavailable")
        #expect(refused.header("retry-after") == "1")
        #expect(try third.readsEndOfFile())
        try first.send(Self.get)
        #expect(try first.readResponse().status == 200, "the admitted connections keep working")
    }

    @Test("a closed connection frees its place under the per-address limit")
    func perAddressLimitFrees() throws {
        let server = try start { $0.maximumConnectionsPerAddress = 1 }
        defer { server.shutdown() }
        do {
            let first = try RawClient(port: server.port)
            try first.send("GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(try first.readResponse().status == 200)
            #expect(try first.readsEndOfFile())
        }
        // The server closes its side after the client's close arrives; retry
        // until it has (each attempt is answered, 503 or 200).
        var status = 503
        for _ in 0..<200 where status == 503 {
            let next = try RawClient(port: server.port)
            try next.send(Self.get)
            status = try next.readResponse().status
        }
        #expect(status == 200)
    }
}
