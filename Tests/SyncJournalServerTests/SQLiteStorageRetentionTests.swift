import SyncJournalTestSupport
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

@Suite("SQLite storage tombstone retention")
struct SQLiteStorageRetentionTests {
    @Test("with a retention, a pull purges old tombstones first: a cursor behind them expires, as on the ReferenceServer")
    func retentionPurgesOnPull() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-server"); defer { directory.remove() }
        let clock = FixedClock()
        let storage = try SQLiteStorage(path: directory.file("r.sqlite"), tombstoneRetentionMilliseconds: 1_000, clock: clock.reading)
        let row = try #require(try storage.push(user: "u1", [Mutations.create("p1")]).first?.outcome.appliedRow)
        let cursor = PullCursor(updatedAt: row.updatedAt, id: "p1")
        let tombstone = try #require(try storage.push(user: "u1", [Mutations.delete("p1", base: row.updatedAt)]).first?.outcome.appliedRow)
        clock.set(tombstone.updatedAt + 500)
        #expect(try storage.pull(user: "u1", PullRequest(cursors: ["pin": cursor], limit: 10)).rows == [tombstone], "within the retention")
        clock.set(tombstone.updatedAt + 120_000)
        #expect(throws: StorageError.cursorExpired(kinds: ["pin"])) {
            try storage.pull(user: "u1", PullRequest(cursors: ["pin": cursor], limit: 10))
        }
    }
}
