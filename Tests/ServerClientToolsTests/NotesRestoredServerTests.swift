import Foundation
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// The operator's story with the example app: a device synced with
/// sync-server on SQLite, the server was stopped, its database replaced by
/// a copy taken before the device's last three syncs, and restarted.
@Suite("notes against a sync-server restored from an earlier copy of its database")
struct NotesRestoredServerTests {
    private func notes(_ arguments: String..., in scratch: TemporaryDirectory) throws -> BuiltTool.Result {
        try BuiltTool.run("notes", arguments, in: scratch.url)
    }

    /// The ids `list --json` prints.
    private func listedIDs(_ device: String, in scratch: TemporaryDirectory) throws -> [String] {
        let result = try notes("list", "--json", "--dir", device, in: scratch)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]],
                                 "\(result.standardOutput)")
        return array.compactMap { $0["id"] as? String }
    }

    /// Copies the database file and its WAL companions, if any.
    private func copyDatabase(_ source: String, to target: String) throws {
        let files = FileManager.default
        for suffix in ["", "-wal", "-shm"] {
            if files.fileExists(atPath: target + suffix) { try files.removeItem(atPath: target + suffix) }
            if files.fileExists(atPath: source + suffix) { try files.copyItem(atPath: source + suffix, toPath: target + suffix) }
        }
    }

    @Test("sync reports the restored server with exit status 76 and keeps every note; reconcile brings the server every note; a second device then lists them all")
    func restoredFromAnEarlierCopy() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-restore"); defer { scratch.remove() }
        let database = scratch.file("server.sqlite")
        let backup = scratch.file("backup.sqlite")
        var server = try RunningSyncServer(database: database)
        var ids: [String] = []
        func add(_ text: String) throws {
            let added = try notes("add", text, "--dir", "a", in: scratch)
            #expect(added.status == 0, "\(added.standardError)")
            ids.append(added.standardOutput.trimmingCharacters(in: .newlines))
            let synced = try notes("sync", "--dir", "a", "--server", server.url, in: scratch)
            #expect(synced.status == 0, "\(synced.standardError)")
        }
        try add("first")
        server.stop()
        try copyDatabase(database, to: backup)
        server = try RunningSyncServer(database: database)
        // Three more syncs after the copy was taken.
        for text in ["second", "third", "fourth"] { try add(text) }
        server.stop()
        try copyDatabase(backup, to: database)
        server = try RunningSyncServer(database: database)
        defer { server.stop() }

        let refused = try notes("sync", "--dir", "a", "--server", server.url, in: scratch)
        #expect(refused.status == 76, "\(refused.standardOutput) \(refused.standardError)")
        #expect(refused.standardError.split(separator: "\n").count == 1, "one line: \(refused.standardError)")
        #expect(try listedIDs("a", in: scratch) == ids, "no note is shown as gone")
        let status = try notes("status", "--json", "--dir", "a", "--server", server.url, in: scratch)
        #expect(status.standardOutput.contains("server changed"), "\(status.standardOutput)")

        let reconciled = try notes("reconcile", "--dir", "a", "--server", server.url, in: scratch)
        #expect(reconciled.status == 0, "\(reconciled.standardOutput) \(reconciled.standardError)")
        #expect(try listedIDs("a", in: scratch) == ids)
        #expect(try notes("sync", "--dir", "a", "--server", server.url, in: scratch).status == 0, "sync works again")

        let second = try notes("sync", "--dir", "b", "--server", server.url, in: scratch)
        #expect(second.status == 0, "\(second.standardError)")
        #expect(Set(try listedIDs("b", in: scratch)) == Set(ids), "the server has every note the device had")
    }
}
