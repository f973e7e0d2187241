import Foundation
import SyncJournalPlatform
import Testing
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalWire

/// Rows acknowledged by the server, collected from several tasks.
private final class AcknowledgedRows: Sendable {
    let rows = Mutex<[ServerRow]>([])
}

@Suite("sync-server under mixed traffic")
struct MixedTrafficTests {
    @Test("parallel clients mixing good pushes, garbage, resets and abandoned requests: every acknowledged push is stored")
    func mixedTraffic() async throws {
        let fixture = try SyncServerFixture(maximumBatchSize: 10, maximumBodyBytes: 65_536)
        let port = fixture.port
        let acknowledged = AcknowledgedRows()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<6 {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(worker + 1))
                    for index in 0..<25 {
                        let client = try RawClient(port: port)
                        switch random.next() % 5 {
                        case 0:
                            try client.send(random.bytes(1 + Int(random.next() % 500)))
                        case 1:
                            try client.send("POST /v1/sync/push HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{\"mutations\":")
                            client.reset()
                        case 2:
                            try client.send("POST /v1/sync/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-alice\r\nContent-Length: 9\r\n\r\n{\"mutati")
                            client.finishSending()
                        default:
                            let batch = (0..<(1 + Int(random.next() % 3))).map { Mutations.create("w\(worker)-\(index)-\($0)") }
                            try client.send(SyncServerFixture.post("/v1/sync/push", body: PushRequestCodec.encode(batch), token: "t-alice"))
                            let response = try client.readResponse()
                            guard response.status == 200 else { throw RawClient.Failure(description: "push: \(response.status)") }
                            let rows = try PushReplyCodec.decode(response.body, answering: batch).compactMap(\.outcome.appliedRow)
                            acknowledged.rows.withLock { $0 += rows }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let stored = Dictionary(uniqueKeysWithValues: try fixture.pullAll().map { ($0.id, $0) })
        let expected = acknowledged.rows.withLock { $0 }
        #expect(!expected.isEmpty)
        for row in expected { #expect(stored[row.id] == row) }
        #expect(stored.count == expected.count, "nothing unacknowledged was applied (no half requests)")
    }
}
