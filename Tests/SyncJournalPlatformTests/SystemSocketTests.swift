import SyncJournalPlatform
import SyncJournalServerPlatform
import Testing

@Suite("Socket wrappers")
struct SystemSocketTests {
    @Test("A loopback listener accepts a connection and bytes sent arrive on the other side")
    func loopbackRoundTrip() throws {
        let (listener, port) = try SystemSocket.bindLoopback(listenBacklog: 4)
        defer { SystemSocket.close(listener) }
        #expect(port != 0)
        let client = try SystemSocket.connectLoopback(port: port)
        defer { SystemSocket.close(client) }
        let server = try SystemSocket.accept(listener)
        defer { SystemSocket.close(server) }
        let sent = try Array("ping".utf8).withUnsafeBytes { try SystemSocket.send(client, from: $0) }
        #expect(sent == 4)
        #expect(try SystemSocket.pollForInput([server], milliseconds: -1) == [true])
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = try buffer.withUnsafeMutableBytes { try SystemSocket.receive(server, into: $0) }
        #expect(Array(buffer[0..<count]) == Array("ping".utf8))
        SystemSocket.shutdown(client, .write)
        #expect(try buffer.withUnsafeMutableBytes { try SystemSocket.receive(server, into: $0) } == 0)
    }

    @Test("Connecting to a bound port that does not listen is refused (ECONNREFUSED)")
    func refusedConnection() throws {
        let (reserved, port) = try SystemSocket.bindLoopback(listenBacklog: nil)
        defer { SystemSocket.close(reserved) }
        #expect(throws: Errno.connectionRefused) { _ = try SystemSocket.connectLoopback(port: port) }
    }

    @Test("Listening on a port out of range fails with bind and EINVAL")
    func portOutOfRange() {
        #expect(throws: SocketSetupFailure(call: "bind", code: Errno.invalidArgument.rawValue)) {
            _ = try SystemSocket.listen(host: "127.0.0.1", port: 70_000)
        }
    }
}
