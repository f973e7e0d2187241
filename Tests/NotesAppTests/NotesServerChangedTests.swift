import Foundation
@testable import NotesApp
import SyncJournal
import SyncJournalCommandLine
import Testing

/// What `notes` says when the server changed: `sync` exits 76 with one
/// line, `status --json` names it, `reconcile` parses and needs a server.
@Suite("notes: a changed server")
struct NotesServerChangedTests {
    static let mismatch = ServerMismatch.differentServer(expected: ServerIdentity("server-a")!, found: ServerIdentity("server-b")!)
    static let behind = ServerMismatch.behind(identity: ServerIdentity("server-a")!, seenStamp: 120, latestStamp: 80)

    @Test("reconcile parses with --dir and --server, and is refused without a server")
    func parsesReconcile() throws {
        #expect(try NotesCommand.parse(["reconcile", "--dir", "a", "--server", "http://h:1"]).action == .reconcile)
        #expect(throws: CommandLineError.self) { try NotesCommand.parse(["reconcile", "--dir", "a"]) }
        #expect(throws: CommandLineError.self) { try NotesCommand.parse(["reconcile", "extra", "--dir", "a", "--server", "http://h:1"]) }
    }

    @Test("a sync stopped by a changed server is its own error: exit status 76 (no other error uses it) and one line that says every note is kept and names reconcile", arguments: [
        ServerIdentityFixtures.different, ServerIdentityFixtures.behind,
    ])
    func syncExitStatus(mismatch: ServerMismatch) throws {
        let server = URL(string: "http://h:1")!
        #expect(throws: NotesError.serverChanged(server: "http://h:1", mismatch: mismatch)) {
            try NotesSyncReport.check(.failed(.serverMismatch(mismatch)), server: server)
        }
        let error = NotesError.serverChanged(server: "http://h:1", mismatch: mismatch)
        #expect(error.exitStatus == 76)
        let others: [NotesError] = [.noteNotFound(id: "n"), .noteUnreadable("x"), .journalLocked(directory: "d"),
                                    .directoryUnusable(directory: "d", reason: "r"), .journalUnreadable(directory: "d", reason: "r"),
                                    .serverUnreachable(server: "s", reason: "r"), .syncFailed(server: "s", reason: "r"),
                                    .store(.retired)]
        #expect(!others.map(\.exitStatus).contains(76))
        #expect(!error.description.contains("\n"))
        #expect(error.description.contains("every note is kept") && error.description.contains("notes reconcile"))
    }

    @Test("status --json reports the changed server as its connectivity, with the mismatch as the reason, and counts the server as answering")
    func statusJSON() throws {
        let report = NotesStatusReport(server: "http://h:1", status: SyncStatus(connectivity: .serverChanged(Self.behind), pendingOperations: 2),
                                       attempt: .failed(.serverMismatch(Self.behind)), lastSuccessfulSync: nil)
        let json = report.json()
        #expect(json.contains("\"connectivity\":\"server changed\""))
        #expect(json.contains("\"reachable\":true"))
        #expect(json.contains("went back in time"))
        #expect(report.text().contains("connectivity: server changed: the server server-a went back in time"))
        #expect(NotesStatusReport.problem(.serverChanged(Self.behind), server: "http://h:1")?.contains("notes reconcile") == true)
    }
}

/// Mismatches the parameterized tests run over.
enum ServerIdentityFixtures {
    static let different = ServerMismatch.differentServer(expected: ServerIdentity("server-a")!, found: ServerIdentity("server-b")!)
    static let behind = ServerMismatch.behind(identity: ServerIdentity("server-a")!, seenStamp: 120, latestStamp: 80)
}
