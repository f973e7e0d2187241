import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTestSupport
import SyncJournalTesting
import Testing


/// Reopens a store after `close()`.
fileprivate func reopenAfterDump(path: String, options: LocalStore.Options) async throws -> LocalStore {
    try await LocalStore.open(path: path, options: options)
}

/// `journal-dump --state`: the state replay rebuilds, shown from a
/// journal a real `LocalStore` wrote, must match the store's own view.
@Suite("journal-dump --state, the binary")
struct JournalDumpStateTests {
    /// A history with something in every part of the state: pulled rows and
    /// cursors, merged edits, sent operations, failures with attempts and a
    /// last error, a rejection, conflicts, and a delete queued behind a sent create.
    static func writeHistory(_ store: LocalStore) async throws {
        try await store.applyPulledPage(kind: "pin", rows: [
            ServerRow(kind: "pin", id: "p-cafe", fields: ["name": .string("Café")], updatedAt: 100),
            ServerRow(kind: "pin", id: "p-museum", fields: ["name": .string("Museum")], updatedAt: 101),
        ], cursor: PullCursor(updatedAt: 101, id: "p-museum"))
        try await store.update("pin", id: "p-cafe", changes: ["visited": .bool(true)])
        try await store.update("pin", id: "p-cafe", changes: ["rating": .int(5)])  // merged into the first update
        try await store.create("note", id: "n-1", fields: ["text": .string("map")])
        try await store.update("note", id: "n-1", changes: ["pinned": .bool(true)])  // merged into the create
        try await store.create("pin", id: "p-bar", fields: ["name": .string("Bar")])
        try await store.update("pin", id: "p-museum", changes: ["name": .string("Deutsches Museum")])
        let ready = try await store.operationsReadyToSend(limit: 10)
        try await store.beginSending(ready.map(\.id))
        let byKey = Dictionary(uniqueKeysWithValues: ready.map { ($0.key.description, $0.id) })
        // The replies, handed over the way the sync engine hands them over.
        try await store.recordOutcomes([(byKey["pin/p-cafe"]!, .failure(.transient, reason: "timeout"))])
        try await store.recordOutcomes([(byKey["pin/p-cafe"]!, .failure(.transient, reason: "HTTP 503"))])
        try await store.recordOutcomes([(byKey["note/n-1"]!, .acknowledged(ServerRow(kind: "note", id: "n-1", fields: ["text": .string("map"), "pinned": .bool(true)], updatedAt: 200)))])
        try await store.recordOutcomes([(byKey["pin/p-museum"]!, .conflicted(server: ServerRow(kind: "pin", id: "p-museum", fields: ["name": .string("Closed")], updatedAt: 150)))])
        await store.finishSending([byKey["pin/p-cafe"]!, byKey["note/n-1"]!, byKey["pin/p-museum"]!])
        try await store.delete("pin", id: "p-bar")  // the create is in flight: the delete queues behind it
        try await store.update("note", id: "n-1", changes: ["rank": .int(3)])
        try await store.create("note", id: "n-2", fields: ["text": .string("never")])
        try await store.beginSending([try await store.operationsReadyToSend(limit: 10).first { $0.key.id == "n-2" }!.id])
        try await store.recordOutcomes([(try await store.outboxOperations().first { $0.key.id == "n-2" }!.id, .failure(.permanent, reason: "HTTP 403"))])
    }

    /// The outbox as `journal-dump --state --json` shows it.
    static func dumpedState(_ path: String) throws -> [String: Any] {
        let result = try BuiltTool.run("journal-dump", ["--state", "--json", path])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n")
        #expect(lines.dropLast().last?.hasPrefix("{\"summary\":") == true, "the summary is the line before the state")
        let last = try #require(lines.last)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        return try #require(object["state"] as? [String: Any], "no state in \(last)")
    }

    /// What the test compares of an outbox entry: id, op, kind, record, base, sent, attempts, last error.
    static func summary(_ entry: OutboxOperation) -> String {
        let op = entry.operation
        return "\(op.id) \(op.kind) \(op.entity)/\(op.recordID) base \(op.baseUpdatedAt.map { String($0) } ?? "-") sent \(entry.sent) attempts \(entry.attempts) error \(entry.lastError ?? "-")"
    }

    static func summary(_ json: [String: Any]) -> String {
        let base = (json["baseUpdatedAt"] as? NSNumber).map { String($0.int64Value) } ?? "-"
        return "\(json["opId"] as? String ?? "?") \(json["op"] as? String ?? "?") \(json["kind"] as? String ?? "?")/\(json["recordId"] as? String ?? "?") "
            + "base \(base) sent \((json["sent"] as? Bool).map { String($0) } ?? "?") attempts \((json["attempts"] as? NSNumber)?.intValue ?? -1) "
            + "error \(json["lastError"] as? String ?? "-")"
    }

    static func checkDump(of path: String, matches store: LocalStore, label: String) async throws {
        let expected = try await store.outboxOperations()
        let state = try dumpedState(path)
        let outbox = try #require(state["outbox"] as? [[String: Any]])
        #expect(outbox.map(summary) == expected.map(summary), "\(label): the dumped outbox differs from the store's")
        // The records per kind, with their pending markers.
        let records = try #require(state["records"] as? [String: [[String: Any]]])
        for kind in ["pin", "note"] {
            let mine = try await store.records(kind).map { "\($0.id) pending \($0.hasPendingChanges)" }
            let dumped = (records[kind] ?? []).map { "\($0["recordId"] as? String ?? "?") pending \(($0["pending"] as? Bool).map { String($0) } ?? "?")" }
            #expect(dumped == mine, "\(label): \(kind) records")
        }
        let cursors = try #require(state["cursors"] as? [String: [String: Any]])
        #expect((cursors["pin"]?["id"] as? String) == (try await store.cursor(for: "pin"))?.id)
        #expect((state["conflicts"] as? [Any])?.count == (try await store.conflicts()).count)
        #expect((state["rejections"] as? [Any])?.count == (try await store.rejections()).count)
    }

    @Test("journal-dump --state --json shows the outbox a LocalStore holds: ids, ops, sent flags, attempts, last errors, in order")
    func stateMatchesTheStore() async throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let path = directory.file("store.journal")
        let store = try await LocalStore.open(path: path)
        try await Self.writeHistory(store)
        let pending = try await store.outboxOperations()
        #expect(pending.count >= 4)
        #expect(pending.contains { $0.sent && $0.attempts == 2 && $0.lastError == "HTTP 503" })
        #expect(pending.contains { $0.sent } && pending.contains { !$0.sent })
        try await Self.checkDump(of: path, matches: store, label: "while the store has it open")

        // The text form lists the same operations in the same order.
        let text = try BuiltTool.run("journal-dump", ["--state", path])
        #expect(text.status == 0)
        let outboxSection = try #require(text.standardOutput.components(separatedBy: "outbox:").last)
        let positions = pending.map { outboxSection.range(of: $0.id.description)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil }, "an operation is missing from the text outbox")
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted(), "the text outbox is out of order")

        // After a checkpoint the journal is a new generation: the dump still matches.
        try await store.checkpoint()
        try await Self.checkDump(of: path, matches: store, label: "after a checkpoint")
        try await store.update("pin", id: "p-cafe", changes: ["after": .bool(true)])
        try await store.close()
        let reopened = try await reopenAfterDump(path: path, options: LocalStore.Options())
        try await Self.checkDump(of: path, matches: reopened, label: "after a checkpoint, an edit and a reopen")
        try await reopened.close()
    }

    @Test("journal-dump --state says when replay cannot rebuild a state, and exits 1")
    func stateOfAnIncompleteCheckpoint() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-tools"); defer { directory.remove() }
        let path = directory.file("cut.journal")
        // The checkpoint sample without its end part (and what follows it).
        let bytes = try Data(contentsOf: BuiltTool.packageRoot.appendingPathComponent("journals/samples/store-checkpoint.journal"))
        let records = try JournalReader(path: BuiltTool.packageRoot.appendingPathComponent("journals/samples/store-checkpoint.journal").path).readAll().records
        let end = try #require(records.last { $0.type == .checkpoint })
        try bytes.prefix(Int(end.offset)).write(to: URL(fileURLWithPath: path))
        let text = try BuiltTool.run("journal-dump", ["--state", path])
        #expect(text.status == 1)
        #expect(text.standardOutput.contains("state:    cannot be rebuilt: incomplete checkpoint"), "\(text.standardOutput)")
        let json = try BuiltTool.run("journal-dump", ["--state", "--json", path])
        #expect(json.status == 1)
        #expect(json.standardOutput.split(separator: "\n").last?.hasPrefix("{\"state\":null,\"stateError\":\"incomplete checkpoint") == true)
        // Without --state the same file is a clean journal.
        #expect(try BuiltTool.run("journal-dump", ["--verify", path]).status == 0)
    }
}
