import Foundation
import SyncJournal
import SyncJournalTesting
import Testing

/// The conflict example of the documentation's Conflicts article, run
/// against the in-memory reference server.
@Suite("Conflicts article example")
struct ConflictArticleExampleTests {
    @Test("the Conflicts article's example: merge-fields policy, outcome(of:) reports the conflict, resolveConflict keeps mine")
    func conflictExample() async throws {
        let directory = try TemporaryDirectory(prefix: "conflict-example")
        defer { directory.remove() }

        let server = ReferenceServer()
        await server.write(user: "u1", kind: "pin", id: "tapas", fields: ["name": .string("Tapas Bar Sol"), "tags": .stringSet(["food"])])

        var options = LocalStore.Options()
        options.conflictPolicies["note"] = .clientWins
        options.conflictPolicies["pin"] = .mergeFields
        options.conflictPolicies["draft"] = .custom { conflict in
            conflict.local.map { .keep($0) } ?? .acceptServer
        }
        let store = try await LocalStore.open(path: directory.file("pins.journal"), options: options)
        let engine = SyncEngine(store: store, transport: server.transport(user: "u1"), options: .init(kinds: ["pin"]))
        #expect(await engine.sync() == .ok(pushed: 0, pulled: 1, conflicts: 0))

        // Another writer changes the name and the tags before this device's edit arrives.
        await server.tick(10)
        await server.update(kind: "pin", id: "tapas", changes: ["name": .string("Sol"), "tags": .stringSet(["food", "spanish"])])

        let op = try await store.update("pin", id: "tapas", changes: ["tags": .stringSet(["food", "late-night"]), "name": .string("Mine")]).operation
        _ = await engine.sync()
        guard case .conflicted(let conflict) = await store.outcome(of: op) else {
            Issue.record("expected a conflict")
            return
        }
        #expect(conflict.shape == .bothUpdated)
        #expect(conflict.resolution.strategy == .mergeFields)
        #expect(conflict.resolution.lostFields == ["name"])
        #expect(await server.row(kind: "pin", id: "tapas")?.fields["tags"] == .stringSet(["food", "spanish", "late-night"]))
        #expect(await server.row(kind: "pin", id: "tapas")?.fields["name"] == .string("Sol"))

        // Later, the user picks "keep mine" after all:
        if let conflict = try await store.conflicts().first {
            try await store.resolveConflict(conflict.id, keeping: .keep(conflict.operation.fields))
        }
        #expect(try await store.conflicts().isEmpty)
        _ = await engine.sync()
        #expect(await server.row(kind: "pin", id: "tapas")?.fields["name"] == .string("Mine"))
        try await store.close()
    }
}
