import Dispatch
import Foundation
import SyncJournalPlatform
import Testing
@testable import SyncJournalServer

@Suite("HTTP server over loopback sockets")
struct HTTPServerTests {
    let responder = EchoResponder()

    func start(_ change: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.maximumBodyBytes = 1_000
        configuration.maximumHeaderBytes = 2_000
        configuration.maximumRequestLineBytes = 500
        configuration.maximumHeaderCount = 20
        change(&configuration)
        let server = HTTPServer(configuration: configuration, responder: responder)
        try server.start()
        return server
    }

    static func post(_ path: String, _ body: String, extra: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\(extra)\r\n\(body)"
    }

    @Test("the bound port is readable when listening on port 0")
    func boundPort() throws {
        let server = try start()
        defer { server.shutdown() }
        #expect(server.port > 0)
    }

    @Test("keep-alive: two requests on one connection are both answered")
    func keepAlive() throws {
        let server = try start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        try client.send(Self.post("/echo", "one"))
        let first = try client.readResponse()
        #expect(first.status == 200 && first.text == "POST /echo one")
        #expect(first.header("connection") == "keep-alive")
        try client.send(Self.post("/echo", "two"))
        #expect(try client.readResponse().text == "POST /echo two")
    }

    @Test("pipelined requests in one write are answered in order")
    func pipelined() throws {
        let server = try start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        try client.send(Self.post("/echo", "a") + "GET /x HTTP/1.1\r\nHost: x\r\n\r\n" + Self.post("/echo", "c", extra: "Connection: close\r\n"))
        #expect(try client.readResponse().text == "POST /echo a")
        #expect(try client.readResponse().text == "GET /x ")
        let last = try client.readResponse()
        #expect(last.text == "POST /echo c" && last.header("connection") == "close")
        #expect(try client.readsEndOfFile())
    }

    @Test("a header section over the limit is 431 and the connection closes")
    func hugeHeaders() throws {
        let server = try start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        try client.send("GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 3_000))\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 431 && response.text == "headers_too_large")
        #expect(try client.readsEndOfFile())
    }

    @Test("more header fields than the limit is 431")
    func tooManyHeaders() throws {
        let server = try start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        let fields = (0..<25).map { "X-\($0): 1\r\n" }.joined()
        try client.send("GET /echo HTTP/1.1\r\nHost: x\r\n\(fields)\r\n")
        #expect(try client.readResponse().status == 431)
    }

    @Test("a request line over the limit is 414")
    func longRequestLine() throws {
        let server = try start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        try client.send("GET /\(String(repeating: "a", count: 600)) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 414)
    }

    @Test("a body over the limit is 413 without reading it, and the connection closes")
    func bodyTooLarge() throws {
        let server = try start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413 && response.text == "too_large")
        #expect(try client.readsEndOfFile())
        #expect(responder.requests.withLock { $0 } == 0)
    }

    @Test("chunked bodies and a POST without Content-Length are 411")
    func lengthRequired() throws {
        let server = try start()
        defer { server.shutdown() }
        let chunked = try RawClient(port: server.port)
        try chunked.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        #expect(try chunked.readResponse().status == 411)
        let missing = try RawClient(port: server.port)
        try missing.send("POST /echo HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try missing.readResponse().status == 411)
    }

    @Test("malformed requests are 400: bad Content-Length, no Host, space before a colon, folded line, bare LF")
    func malformed() throws {
        let server = try start()
        defer { server.shutdown() }
        for raw in ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
                    "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
                    "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0x10\r\n\r\n",
                    "GET /echo HTTP/1.1\r\n\r\n",
                    "GET /echo HTTP/1.1\r\nHost : x\r\n\r\n",
                    "GET /echo HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
                    "GET /echo HTTP/1.1\nHost: x\r\n\r\n",
                    "GET echo HTTP/1.1\r\nHost: x\r\n\r\n",
                    "\u{01}\u{02}garbage\r\n\r\n"] {
            let client = try RawClient(port: server.port)
            try client.send(raw)
            let response = try client.readResponse()
            #expect(response.status == 400, "\(raw.debugDescription)")
            #expect(try client.readsEndOfFile())
        }
        let binary = try RawClient(port: server.port)
        try binary.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])   // a TLS hello's first bytes: no line end yet
        #expect(try binary.readResponse().status == 400, "binary garbage is refused without waiting for a line end")
        let version = try RawClient(port: server.port)
        try version.send("GET /echo HTTP/2.0\r\nHost: x\r\n\r\n")
        #expect(try version.readResponse().status == 505)
    }

    @Test("a truncated body: end of file closes without an answer, a stalled one is 408 after the read timeout")
    func truncatedBody() throws {
        let server = try start { $0.readTimeoutMilliseconds = 300 }
        defer { server.shutdown() }
        let ended = try RawClient(port: server.port)
        try ended.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten b")
        ended.finishSending()
        #expect(try ended.readsEndOfFile())
        let stalled = try RawClient(port: server.port)
        try stalled.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten b")
        let response = try stalled.readResponse()
        #expect(response.status == 408)
        #expect(responder.requests.withLock { $0 } == 0, "nothing half-received reached the responder")
    }

    @Test("a Content-Length shorter than the body: the rest is read as the next request and refused")
    func wrongContentLength() throws {
        let server = try start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcdef-not-a-request\r\n\r\n")
        #expect(try client.readResponse().text == "POST /echo abc")
        #expect(try client.readResponse().status == 400)
        #expect(try client.readsEndOfFile())
    }

    @Test("Expect: 100-continue gets an interim 100 before the body is sent")
    func expectContinue() throws {
        let server = try start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        #expect(try client.readResponse().status == 100)
        try client.send("body")
        #expect(try client.readResponse().text == "POST /echo body")
    }

    @Test("garbage, a reset and a slow client on other connections do not affect a good connection")
    func isolation() throws {
        let server = try start { $0.readTimeoutMilliseconds = 5_000 }
        defer { server.shutdown() }
        let good = try RawClient(port: server.port)
        try good.send(Self.post("/echo", "before"))
        #expect(try good.readResponse().text == "POST /echo before")
        // The good connection is half-way through a request while the others misbehave.
        try good.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nmid")
        let garbage = try RawClient(port: server.port)
        try garbage.send(Self.post("/echo", "ok") + String(repeating: "\u{7F}garbage\r\n", count: 200))
        let slow = try RawClient(port: server.port)
        try slow.send("POST /echo HTTP/1.1\r\nHo")
        let reset = try RawClient(port: server.port)
        try reset.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\npartial")
        reset.reset()
        #expect(try garbage.readResponse().text == "POST /echo ok")
        #expect(try garbage.readResponse().status == 400)
        try good.send("dle")
        #expect(try good.readResponse().text == "POST /echo middle")
        try good.send(Self.post("/echo", "after"))
        #expect(try good.readResponse().text == "POST /echo after")
    }

    @Test("connections over the maximum are answered 503 and closed; the others keep working")
    func connectionLimit() throws {
        let server = try start { $0.maximumConnections = 2 }
        defer { server.shutdown() }
        let first = try RawClient(port: server.port)
        let second = try RawClient(port: server.port)
        // Both are admitted once each has had an answer.
        try first.send(Self.post("/echo", "1"))
        try second.send(Self.post("/echo", "2"))
        _ = try first.readResponse()
        _ = try second.readResponse()
        let third = try RawClient(port: server.port)
        let refused = try third.readResponse()
        #expect(refused.status == 503 && refused.text == "unavailable")
        try first.send(Self.post("/echo", "still"))
        #expect(try first.readResponse().text == "POST /echo still")
    }

    @Test("shutdown finishes a request in flight (answered with Connection: close), closes idle connections, stops accepting")
    func gracefulShutdown() throws {
        let server = try start()
        let port = server.port
        let idle = try RawClient(port: port)
        try idle.send(Self.post("/echo", "x"))
        _ = try idle.readResponse()
        let busy = try RawClient(port: port)
        try busy.send(Self.post("/hold", "in flight"))
        responder.entered.wait()
        let stopped = DispatchSemaphore(value: 0)
        Thread { server.shutdown(); stopped.signal() }.start()
        #expect(try idle.readsEndOfFile(), "an idle keep-alive connection is closed")
        #expect(stopped.wait(timeout: .now() + .milliseconds(200)) == .timedOut, "shutdown waits for the request in flight")
        responder.held.signal()
        let response = try busy.readResponse()
        #expect(response.text == "POST /hold in flight" && response.header("connection") == "close")
        stopped.wait()
        #expect(throws: RawClient.Failure.self) { try RawClient(port: port) }
    }
}
