import Foundation
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

@Suite("the notes example app, two devices against a running sync-server binary")
struct NotesAgainstServerTests {
    /// Runs `notes` with `arguments` in `scratch`.
    private func notes(_ arguments: String..., in scratch: TemporaryDirectory) throws -> BuiltTool.Result {
        try BuiltTool.run("notes", arguments, in: scratch.url)
    }

    /// The notes `list --json` prints, as id and text pairs.
    private func listed(_ result: BuiltTool.Result) throws -> [(id: String, text: String)] {
        let array = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]],
                                 "\(result.standardOutput)")
        return array.map { (id: $0["id"] as? String ?? "", text: $0["text"] as? String ?? "") }
    }

    @Test("a note added and synced on device A reaches device B; B's edit reaches A; A's delete reaches B")
    func twoDeviceSession() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))

        let added = try notes("add", "buy", "milk", "--dir", "a", in: scratch)
        #expect(added.status == 0, "\(added.standardError)")
        let id = added.standardOutput.trimmingCharacters(in: .newlines)
        #expect(!id.isEmpty && !id.contains("\n"))
        let firstSync = try notes("--dir", "a", "--server", server.url, "sync", in: scratch)
        #expect(firstSync.status == 0, "\(firstSync.standardError)")
        #expect(firstSync.standardOutput.hasPrefix("ok (pushed 1,"), "\(firstSync.standardOutput)")

        #expect(try notes("sync", "--dir", "b", "--server", server.url, in: scratch).status == 0)
        let onB = try listed(try notes("list", "--json", "--dir", "b", in: scratch))
        #expect(onB.map(\.id) == [id])
        #expect(onB.map(\.text) == ["buy milk"])

        #expect(try notes("edit", id, "buy oat milk", "--dir", "b", in: scratch).status == 0)
        #expect(try notes("sync", "--dir", "b", "--server", server.url, in: scratch).status == 0)
        #expect(try notes("sync", "--dir", "a", "--server", server.url, in: scratch).status == 0)
        let onA = try notes("list", "--dir", "a", in: scratch)
        #expect(onA.standardOutput == "\(id)  buy oat milk\n")

        #expect(try notes("rm", id, "--dir", "a", in: scratch).status == 0)
        #expect(try notes("sync", "--dir", "a", "--server", server.url, in: scratch).status == 0)
        #expect(try notes("sync", "--dir", "b", "--server", server.url, in: scratch).status == 0)
        #expect(try listed(try notes("list", "--json", "--dir", "b", in: scratch)).isEmpty)
        #expect(try notes("list", "--dir", "b", in: scratch).standardOutput == "(no notes)\n")
    }

    @Test("list orders notes by creation, not by id, on the device that wrote them and on the other")
    func creationOrder() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        var ids: [String] = []
        for text in ["first", "second", "third", "fourth", "fifth", "sixth"] {
            ids.append(try notes("add", text, "--dir", "a", in: scratch).standardOutput.trimmingCharacters(in: .newlines))
        }
        #expect(try notes("sync", "--dir", "a", "--server", server.url, in: scratch).status == 0)
        #expect(try notes("sync", "--dir", "b", "--server", server.url, in: scratch).status == 0)
        for device in ["a", "b"] {
            let listing = try listed(try notes("list", "--json", "--dir", device, in: scratch))
            #expect(listing.map(\.text) == ["first", "second", "third", "fourth", "fifth", "sixth"], "device \(device)")
            #expect(listing.map(\.id) == ids, "device \(device)")
        }
    }

    @Test("watch --json on device B prints A's new note after A syncs, and ends with status 0 at the end of its input")
    func watchSeesOtherDevice() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        let watch = try RunningNotesWatch(["--json", "--dir", "b", "--server", server.url, "--interval", "0.2"], in: scratch.url)
        let first = try #require(watch.line { _ in true }, "watch printed nothing")
        #expect(first.text == "[]")

        let id = try notes("add", "from A", "--dir", "a", in: scratch).standardOutput.trimmingCharacters(in: .newlines)
        #expect(try notes("sync", "--dir", "a", "--server", server.url, in: scratch).status == 0)
        let seen = try #require(watch.line(from: first.index + 1) { $0.contains(id) }, "watch never printed \(id): \(watch.printed)")
        let array = try #require(try JSONSerialization.jsonObject(with: Data(seen.text.utf8)) as? [[String: Any]])
        #expect(array.count == 1)
        #expect(array.first?["id"] as? String == id)
        #expect(array.first?["text"] as? String == "from A")
        #expect(array.first?["pinned"] as? Bool == false)

        watch.closeInput()
        #expect(await watch.waitForExit() == 0)
    }

    @Test("watch ends with status 0 on SIGINT and on SIGTERM, after its first listing")
    func watchEndsOnSignals() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        for signal in ["SIGINT", "SIGTERM"] {
            let watch = try RunningNotesWatch(["--dir", "b", "--server", server.url], in: scratch.url)
            #expect(watch.line { $0 == "(no notes)" } != nil, "\(signal): \(watch.printed)")
            if signal == "SIGINT" { watch.process.interrupt() } else { watch.process.terminate() }
            #expect(await watch.waitForExit() == 0, "\(signal)")
            #expect(watch.process.terminationReason == .exit, "\(signal)")
        }
    }

    @Test("while watch holds a device's directory, another notes command on it exits 75 with one line saying it is in use")
    func lockedJournal() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        let watch = try RunningNotesWatch(["--dir", "b", "--server", server.url], in: scratch.url)
        #expect(watch.line { _ in true } != nil)
        let refused = try notes("add", "second writer", "--dir", "b", in: scratch)
        #expect(refused.status == 75)
        #expect(refused.standardOutput.isEmpty)
        #expect(refused.standardError.hasPrefix("notes: b is in use by another notes process"), "\(refused.standardError)")
        #expect(refused.standardError.split(separator: "\n").count == 1)
        watch.closeInput()
        #expect(await watch.waitForExit() == 0)
        #expect(try notes("add", "second writer", "--dir", "b", in: scratch).status == 0)
    }

    @Test("edit and rm of an id this device does not have exit 1 with one line naming the id")
    func missingNote() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        for arguments in [["edit", "no-such-id", "text"], ["rm", "no-such-id"]] {
            let result = try BuiltTool.run("notes", arguments + ["--dir", "a"], in: scratch.url)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.standardError == "notes: no note no-such-id on this device\n", "\(arguments)")
        }
    }

    @Test("sync with nothing listening exits 69 with one line, and the note stays queued for the next sync")
    func unreachableServer() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        #expect(try notes("add", "offline note", "--dir", "a", in: scratch).status == 0)
        let result = try notes("sync", "--dir", "a", "--server", "http://127.0.0.1:1", in: scratch)
        #expect(result.status == 69)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix("notes: cannot reach the server at http://127.0.0.1:1"), "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1)
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        #expect(try notes("sync", "--dir", "a", "--server", server.url, in: scratch).standardOutput.hasPrefix("ok (pushed 1,"))
    }

    @Test("bad arguments exit 64 with one line on standard error and nothing on standard output")
    func badArguments() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let cases: [[String]] = [[], ["--dir", "a"], ["frobnicate", "--dir", "a"], ["add", "--dir", "a"], ["list"],
                                 ["sync", "--dir", "a"], ["add", "x", "--json", "--dir", "a"], ["list", "--bogus", "--dir", "a"],
                                 ["list", "--model-version", "3", "--dir", "a"], ["list", "--model-version", "abc", "--dir", "a"],
                                 ["pin", "x", "--model-version", "1", "--dir", "a"], ["unpin", "x", "--model-version=1", "--dir", "a"]]
        for arguments in cases {
            let result = try BuiltTool.run("notes", arguments, in: scratch.url)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.standardOutput.isEmpty, "\(arguments)")
            #expect(result.standardError.hasPrefix("notes: "), "\(arguments)")
            #expect(result.standardError.split(separator: "\n").count == 1, "\(arguments): \(result.standardError)")
        }
    }

    @Test("when both devices change a note's text, the device that synced second lists the conflict with its lost text, editing the note clears it, and rm clears one whose note another device deleted")
    func conflictShown() throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        let id = try notes("add", "draft", "--dir", "a", in: scratch).standardOutput.trimmingCharacters(in: .newlines)
        #expect(try notes("sync", "--dir", "a", "--server", server.url, in: scratch).status == 0)
        #expect(try notes("sync", "--dir", "b", "--server", server.url, in: scratch).status == 0)
        #expect(try notes("edit", id, "from A", "--dir", "a", in: scratch).status == 0)
        #expect(try notes("edit", id, "from B", "--dir", "b", in: scratch).status == 0)
        #expect(try notes("sync", "--dir", "a", "--server", server.url, in: scratch).status == 0)
        let second = try notes("sync", "--dir", "b", "--server", server.url, in: scratch)
        #expect(second.standardOutput.hasSuffix("conflicts 1)\n"), "\(second.standardOutput)")
        let listing = try notes("list", "--dir", "b", in: scratch)
        #expect(listing.standardOutput == "\(id)  from A  [conflict: your text \"from B\" was not kept]\n")
        #expect(try notes("edit", id, "from B after all", "--dir", "b", in: scratch).status == 0)
        #expect(try notes("list", "--dir", "b", in: scratch).standardOutput == "\(id)  from B after all\n")

        // A deletes the note while B's new text is still queued: B lists the lost text on a line of its own,
        // and rm on B clears it.
        #expect(try notes("rm", id, "--dir", "a", in: scratch).status == 0)
        #expect(try notes("sync", "--dir", "a", "--server", server.url, in: scratch).status == 0)
        #expect(try notes("sync", "--dir", "b", "--server", server.url, in: scratch).status == 0)
        let deleted = try notes("list", "--dir", "b", in: scratch)
        #expect(deleted.standardOutput == "\(id)  (deleted on another device)  [conflict: your text \"from B after all\" was not kept]\n")
        #expect(try notes("rm", id, "--dir", "b", in: scratch).status == 0)
        #expect(try notes("list", "--dir", "b", in: scratch).standardOutput == "(no notes)\n")
        #expect(try notes("rm", id, "--dir", "b", in: scratch).status == 1)
    }

    /// Which device syncs first after both edited offline.
    enum SyncOrder: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case versionOneFirst, versionTwoFirst
        var testDescription: String { rawValue }
    }

    /// The notes `list --json` prints, by id: each note's text, and its pin
    /// when the listing has one (`nil` when it has no `pinned` key).
    private func listedByID(_ result: BuiltTool.Result) throws -> [String: (text: String, pinned: Bool?)] {
        let array = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]],
                                 "\(result.standardOutput)")
        return Dictionary(uniqueKeysWithValues: array.map { ($0["id"] as? String ?? "", ($0["text"] as? String ?? "", $0["pinned"] as? Bool)) })
    }

    /// Device A on `--model-version 1`, device B on version 2, against the
    /// sync-server at `server`: each edits the same notes offline, then they
    /// sync in `order`, and both must show every edit as far as their version can.
    private func versionsConverge(server: String, order: SyncOrder, in scratch: TemporaryDirectory) throws {
        func on(_ device: String, _ arguments: String...) throws -> BuiltTool.Result {
            let version = device == "a" ? "1" : "2"
            let result = try BuiltTool.run("notes", arguments + ["--dir", device, "--model-version", version], in: scratch.url)
            #expect(result.status == 0, "\(device) \(arguments): \(result.standardError)")
            return result
        }
        func sync(_ device: String) throws {
            let result = try on(device, "sync", "--server", server)
            #expect(result.standardOutput.hasSuffix("conflicts 0)\n"), "\(device): \(result.standardOutput)")
        }
        func id(_ result: BuiltTool.Result) -> String { result.standardOutput.trimmingCharacters(in: .newlines) }

        let fromA = id(try on("a", "add", "call the plumber"))
        let fromB = id(try on("b", "add", "buy milk"))
        _ = try on("b", "pin", fromB)
        try sync("a"); try sync("b"); try sync("a")

        // Offline: A edits the text of the note B pinned and adds one; B pins A's note and adds one.
        _ = try on("a", "edit", fromB, "buy oat milk")
        let laterA = id(try on("a", "add", "water the plants"))
        _ = try on("b", "pin", fromA)
        let laterB = id(try on("b", "add", "book the dentist"))
        switch order {
        case .versionOneFirst: try sync("a"); try sync("b"); try sync("a")
        case .versionTwoFirst: try sync("b"); try sync("a"); try sync("b")
        }

        let texts = [fromA: "call the plumber", fromB: "buy oat milk", laterA: "water the plants", laterB: "book the dentist"]
        let onA = try listedByID(try on("a", "list", "--json"))
        let onB = try listedByID(try on("b", "list", "--json"))
        #expect(onA.mapValues(\.text) == texts)
        #expect(onB.mapValues(\.text) == texts)
        #expect(onA.values.allSatisfy { $0.pinned == nil }, "version 1's listing has no pinned key")
        #expect(onB.mapValues(\.pinned) == [fromA: true, fromB: true, laterA: false, laterB: false])

        // A lists in creation order; B the same notes, its two pinned ones first, marked.
        let listA = try on("a", "list").standardOutput.split(separator: "\n").map(String.init)
        let listB = try on("b", "list").standardOutput.split(separator: "\n").map(String.init)
        #expect(listA.count == 4 && listB.count == 4, "\(listA) \(listB)")
        #expect(!listA.contains { $0.contains("[pinned]") })
        func ids(_ lines: some Sequence<String>) -> [String] { lines.map { String($0.prefix { $0 != " " }) } }
        #expect(listB.prefix(2).allSatisfy { $0.contains("  [pinned] ") }, "\(listB)")
        #expect(Set(ids(listB.prefix(2))) == [fromA, fromB])
        let unpinnedOnA: [String] = ids(listA).filter { $0 != fromA && $0 != fromB }
        #expect(ids(listB.dropFirst(2)) == unpinnedOnA)
    }

    @Test("a version-1 device and a version-2 device through sync-server on SQLite: offline edits converge in either order, B's pins survive A's text edits, A lists every note B created",
          arguments: SyncOrder.allCases)
    func twoModelVersionsOnSQLite(order: SyncOrder) throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let server = try RunningSyncServer(database: scratch.file("server.sqlite"))
        try versionsConverge(server: server.url, order: order, in: scratch)
    }

    @Test("a version-1 device and a version-2 device through sync-server on PostgreSQL: offline edits converge in either order, B's pins survive A's text edits, A lists every note B created",
          .enabled(if: NotesPostgreSQL.shouldRun, "PostgreSQL unavailable (set SYNCJOURNAL_TEST_POSTGRES, or install PostgreSQL for tools/pg-test-cluster.sh)"),
          arguments: SyncOrder.allCases)
    func twoModelVersionsOnPostgreSQL(order: SyncOrder) throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let schema = try NotesPostgreSQL.Schema()
        let server = try RunningSyncServer(postgres: schema.connection)
        #expect(server.readyLine.contains("postgres"), "\(server.readyLine)")
        try versionsConverge(server: server.url, order: order, in: scratch)
        server.stop()
    }
}
