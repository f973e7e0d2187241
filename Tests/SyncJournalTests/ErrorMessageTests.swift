import Foundation
import SyncJournal
import SyncJournalTesting
import Testing

// The errors an app shows: `localizedDescription` says what failed and names
// the journal's path once.

@Suite("Error messages: LocalizedError, the journal's path named once")
struct ErrorMessageTests {
    /// How often `needle` occurs in `text`.
    static func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    static func openError(_ path: String) async -> StoreError? {
        do {
            let store = try await LocalStore.open(path: path)
            try await store.close()
            return nil
        } catch {
            return error
        }
    }

    @Test("opening a journal in a missing directory says which directory is missing and names the journal once")
    func missingDirectory() async throws {
        let scratch = try TemporaryDirectory(prefix: "error-messages"); defer { scratch.remove() }
        let directory = scratch.url.path + "/missing"
        let path = directory + "/notes.journal"
        let error = try #require(await Self.openError(path))
        #expect(error.localizedDescription == "cannot open the journal at \(path): the directory \(directory) does not exist (ENOENT)")
        #expect(Self.occurrences(of: "notes.journal", in: error.localizedDescription) == 1)
    }

    @Test("opening a journal another store holds says so and names the journal once")
    func lockedJournal() async throws {
        let scratch = try TemporaryDirectory(prefix: "error-messages"); defer { scratch.remove() }
        let path = scratch.url.path + "/notes.journal"
        let first = try await LocalStore.open(path: path)
        let error = try #require(await Self.openError(path))
        try await first.close()
        #expect(error.localizedDescription == "cannot open the journal at \(path): another store, in this or another process, has it open")
    }

    @Test("a store over a corrupt journal explains the damage and names the journal once")
    func unreadableJournal() async throws {
        let scratch = try TemporaryDirectory(prefix: "error-messages"); defer { scratch.remove() }
        let path = scratch.url.path + "/notes.journal"
        try Data("not a journal at all".utf8).write(to: URL(fileURLWithPath: path))
        let store = try await LocalStore.open(path: path)
        var message = ""
        do { _ = try await store.records("note") } catch { message = error.localizedDescription }
        try await store.close()
        #expect(message.hasPrefix("\(path): stored data could not be read (not a SyncJournal file)"), "\(message)")
        #expect(Self.occurrences(of: path, in: message) == 1)
    }

    @Test("journal, store, transport and sync errors give their one-line explanation as localizedDescription")
    func everyErrorIsLocalized() {
        let journal = JournalError.locked(path: "/data/notes.journal")
        #expect(journal.localizedDescription == "/data/notes.journal: another writer has this journal open")
        let store = StoreError.recordNotFound(RecordKey(kind: "note", id: "n1"))
        #expect(store.localizedDescription == store.description)
        let transport = TransportError.permanent(reason: "the server refused the request")
        #expect(transport.localizedDescription == transport.description)
        let failure = SyncFailure.transport(.offline)
        #expect(failure.localizedDescription == failure.description)
        #expect(StoreError.journal(journal).localizedDescription == "could not save: /data/notes.journal: another writer has this journal open")
    }

    @Test("a read-only or suspended store's refusal says read-only or suspended and names the journal once")
    func readOnlyAndSuspendedRefusals() async throws {
        let scratch = try TemporaryDirectory(prefix: "error-messages"); defer { scratch.remove() }
        let path = scratch.url.path + "/notes.journal"
        let writer = try await LocalStore.open(path: path)
        var message = ""
        await writer.suspend()
        do { try await writer.create("note", id: "n1", fields: [:]) } catch { message = error.localizedDescription }
        #expect(message == "the store of \(path) is suspended: nothing is written until it resumes")
        try await writer.close()

        var options = LocalStore.Options()
        options.readOnly = true
        let reader = try await LocalStore.open(path: path, options: options)
        do { try await reader.create("note", id: "n1", fields: [:]) } catch { message = error.localizedDescription }
        #expect(message == "\(path) is open read-only: nothing can be written to it")
        #expect(Self.occurrences(of: "notes.journal", in: message) == 1)
        try await reader.close()
    }
}
