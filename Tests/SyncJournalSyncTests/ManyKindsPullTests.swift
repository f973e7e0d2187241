import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// An app that follows more kinds than one pull request may name.
@Suite("Sync engine: more kinds than one pull may name")
struct ManyKindsPullTests {
    @Test("300 kinds are pulled in groups of at most 256 kinds each, and every kind's rows arrive")
    func manyKindsArePulledInGroups() async throws {
        let dir = try TemporaryDirectory(prefix: "sync-engine-tests"); defer { dir.remove() }
        let store = try await openStore(dir.file("device.journal"))
        let server = ReferenceServer()
        let kinds = (0..<300).map { "kind\($0)" }
        // Another device of the user created one record of each kind.
        let created = try await server.transport(user: "u1").push(kinds.map { kind in
            Mutation(operationID: .random(), kind: kind, op: .create, recordID: "r-\(kind)", fields: ["n": 1], baseUpdatedAt: nil)
        })
        #expect(created.count == 300)
        let recorder = RecordingTransport(server.transport(user: "u1"))
        let engine = SyncEngine(store: store, transport: recorder, options: .init(kinds: kinds))

        let outcome = await engine.sync()
        guard case .ok(_, let pulled, _) = outcome else {
            Issue.record("the sync ended \(outcome)")
            return
        }
        #expect(pulled == 300)
        let requests = await recorder.pullRequests
        #expect(requests.count >= 2)
        #expect(requests.allSatisfy { $0.cursors.count <= ProtocolLimits.maximumKindsPerPull })
        #expect(Set(requests.flatMap { $0.cursors.keys }) == Set(kinds))
        for kind in kinds { #expect(try await store.records(kind).map(\.id) == ["r-\(kind)"]) }
    }
}
