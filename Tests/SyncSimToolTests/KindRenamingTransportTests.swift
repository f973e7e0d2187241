import Foundation
import Testing
import SyncJournalProtocol
@testable import SyncSimTool
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

@Suite("sync-sim --server's per-run kinds")
struct KindRenamingTransportTests {
    @Test("the server sees pin-RUN; the device sees pin in results, rows, cursors and reads; another run's rows stay invisible")
    func renamesBothWays() async throws {
        let server = ReferenceServer()
        let run = KindRenamingTransport(base: server.transport(user: "u1"), suffix: "-r1")
        let other = KindRenamingTransport(base: server.transport(user: "u1"), suffix: "-r2")
        _ = try await other.push([Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p0", fields: ["n": .int(2)], baseUpdatedAt: nil)])
        let results = try await run.push([Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p0", fields: ["n": .int(1)], baseUpdatedAt: nil)])
        guard case .applied(let row)? = results.first?.outcome else { Issue.record("not applied: \(results)"); return }
        #expect(row.kind == "pin")
        #expect(await server.row(kind: "pin-r1", id: "p0")?.fields["n"] == .int(1))
        #expect(await server.row(kind: "pin", id: "p0") == nil)
        let page = try await run.pull(PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(page.rows.map(\.kind) == ["pin"] && page.rows.map { $0.fields["n"] } == [.int(1)], "only this run's row")
        #expect(Array(page.nextCursors.keys) == ["pin"])
        #expect(try await run.read(kind: "pin", id: "p0")?.kind == "pin")
        let conflict = try await run.push([Mutation(operationID: .random(), kind: "pin", op: .create, recordID: "p0", fields: [:], baseUpdatedAt: nil)])
        guard case .conflict(let serverCopy)? = conflict.first?.outcome else { Issue.record("no conflict: \(conflict)"); return }
        #expect(serverCopy?.kind == "pin")
    }
}
