import Foundation
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalWire
import Testing

/// A wait names up to 1,000 kinds (journals/PROTOCOL.md, "Waiting for
/// changes"), more than one pull may: the server looks at them a pull's
/// worth at a time.
@Suite("kinds named by one wait for changes")
struct ChangeWaitKindLimitTests {
    /// `count` kinds, `k0000` to `k0999`: `k0999` sorts last, in the last pull's worth.
    static func kinds(_ count: Int) -> [String: PullCursor?] {
        var cursors: [String: PullCursor?] = [:]
        for index in 0..<count { cursors.updateValue(nil, forKey: "k" + String(String(index + 10_000).dropFirst())) }
        return cursors
    }

    @Test("a wait naming 1,000 kinds is answered: no change at once, and changed once the last of them has a row",
          arguments: StorageBackend.tested)
    func atTheLimit(_ backend: StorageBackend) throws {
        let server = try ChangeWaitServer(backend)
        let cursors = Self.kinds(ChangeWaitRequestCodec.maximumKinds)
        #expect(cursors.count == 1_000)
        #expect(ChangeWaitServer.answers(try server.wait(cursors, timeoutMilliseconds: 0), changed: false))
        try server.push("k0999", "r1")
        #expect(ChangeWaitServer.answers(try server.wait(cursors, timeoutMilliseconds: 0), changed: true))
    }

    @Test("a wait naming 1,001 kinds is a 400 naming the cursors", arguments: StorageBackend.tested)
    func overTheLimit(_ backend: StorageBackend) throws {
        let server = try ChangeWaitServer(backend)
        let response = try server.wait(Self.kinds(ChangeWaitRequestCodec.maximumKinds + 1), timeoutMilliseconds: 0)
        #expect(response.status == 400)
        let error = try SyncServerFixture.error(response)
        #expect(error.code == .badRequest)
        #expect(error.message.contains("$.cursors"), "\(error.message)")
        #expect(error.message.contains("1001 kinds, at most 1000"), "\(error.message)")
    }
}
