import Foundation
@testable import NotesApp
import SyncJournal
import SyncJournalCommandLine
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// The app's two model versions in one device directory: version 2 reads what
/// version 1 wrote, pins, and lists pinned notes first; version 1 keeps its
/// shape and never touches a pin.
@Suite("notes: model versions 1 and 2 on one device")
struct NotesModelVersionTests {
    /// Runs `notes` in-process and returns its exit status and output.
    private func run(_ arguments: [String]) async -> (status: Int32, output: CapturedOutput) {
        let captured = CapturedOutput()
        let status = await NotesCommand.run(arguments: arguments, output: captured.output, stopRequests: { AsyncStream { $0.finish() } })
        return (status, captured)
    }

    @Test("a directory version 1 wrote, opened by version 2, lists every note with its text, unpinned, and nothing is rewritten")
    func versionOneDirectoryOpenedByVersionTwo() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-versions"); defer { scratch.remove() }
        let directory = scratch.file("device")
        let old = try await NotesRepository.open(directory: directory, modelVersion: .version1)
        var ids: [String] = []
        for text in ["first", "second", "third"] { ids.append(try await old.add(text: text)) }
        try await old.edit(id: ids[1], text: "second, edited")
        let before = try await old.snapshot()
        await old.close()

        let current = try await NotesRepository.open(directory: directory, modelVersion: .version2)
        let after = try await current.snapshot()
        #expect(after.unreadable.isEmpty)
        #expect(after.notes.map(\.id) == before.notes.map(\.id))
        #expect(Set(after.notes.map(\.id)) == Set(ids))
        #expect(after.notes.map(\.text) == before.notes.map(\.text))
        #expect(Set(after.notes.map(\.text)) == ["first", "second, edited", "third"])
        #expect(after.notes.allSatisfy { $0.pinned == false })
        #expect(before.notes.allSatisfy { $0.pinned == nil }, "version 1 lists no pin at all")
        // Reading in version 2's shape wrote nothing: the records are as version 1 stored them.
        for id in ids {
            let stored = try #require(try await current.store.record("note", id: id))
            #expect(Set(stored.fields.keys) == ["text", "created"])
        }
        await current.close()
    }

    @Test("pin and unpin change only the pin: pinned notes list first, marked, and unpinned go back to creation order")
    func pinAndUnpin() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-versions"); defer { scratch.remove() }
        let repository = try await NotesRepository.open(directory: scratch.file("device"))
        #expect(repository.modelVersion == .version2)
        let first = try await repository.add(text: "first")
        let second = try await repository.add(text: "second")
        let third = try await repository.add(text: "third")
        let creationOrder = try await repository.snapshot().notes.map(\.id)
        #expect(Set(creationOrder) == [first, second, third])
        // Synced, so the pin is an edit of its own rather than folded into the queued create.
        #expect(await repository.engine(transport: ReferenceServer().transport(user: "u1")).sync() == .ok(pushed: 3, pulled: 3, conflicts: 0))

        try await repository.setPinned(id: third, true)
        let queued = try #require(try await repository.store.pendingOperations(kind: "note", id: third).last?.operation)
        #expect(queued.fields == ["pinned": .bool(true)], "a pin queues only the pin")
        let pinned = try await repository.snapshot()
        #expect(pinned.notes.map(\.id) == [third] + creationOrder.filter { $0 != third })
        #expect(pinned.notes.map(\.pinned) == [true, false, false])
        #expect(NotesListing.text(pinned).hasPrefix("\(third)  [pinned] third\n"))

        try await repository.setPinned(id: third, false)
        let unpinned = try await repository.snapshot()
        #expect(unpinned.notes.map(\.id) == creationOrder)
        #expect(unpinned.notes.allSatisfy { $0.pinned == false })
        await #expect(throws: NotesError.noteNotFound(id: "no-such-id")) { try await repository.setPinned(id: "no-such-id", true) }
        await repository.close()
    }

    @Test("version 2's list query orders pinned notes first, a note version 1 wrote as unpinned, as Note's own order does")
    func listQueryAgreesWithNoteOrder() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-versions"); defer { scratch.remove() }
        let repository = try await NotesRepository.open(directory: scratch.file("device"))
        try await repository.store.insert(Note(id: "b", body: "b", created: 20))
        try await repository.store.insert(NoteVersion1(id: "z", text: "z", created: 10))
        try await repository.store.insert(Note(id: "p", body: "p", created: 30, pinned: true))
        try await repository.store.insert(NoteVersion1(id: "a", text: "a", created: 20))
        try await repository.store.insert(Note(id: "q", body: "q", created: 40, pinned: true))
        let listed = try await repository.snapshot().notes.map(\.id)
        #expect(listed == ["p", "q", "z", "a", "b"])
        let sorted = try await repository.store.fetchAll(Note.self).values.sorted().map(\.id)
        #expect(listed == sorted)
        #expect(Field(\Note.body).name == NotesRepository.textField, "the body is stored under version 1's name")
        await repository.close()
    }

    @Test("version 1 edits the text of a note version 2 pinned without touching the pin, and version 2 still lists it pinned")
    func versionOneLeavesThePin() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-versions"); defer { scratch.remove() }
        let directory = scratch.file("device")
        let current = try await NotesRepository.open(directory: directory)
        let id = try await current.add(text: "draft")
        try await current.setPinned(id: id, true)

        let server = ReferenceServer()
        #expect(await current.engine(transport: server.transport(user: "u1")).sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        await current.close()

        let old = try await NotesRepository.open(directory: directory, modelVersion: .version1)
        #expect(try await old.snapshot().notes == [ListedNote(id: id, text: "draft", created: try #require(try await old.store.fetch(NoteVersion1.self, id: id)).created)])
        try await old.edit(id: id, text: "final")
        let queued = try #require(try await old.store.pendingOperations(kind: "note", id: id).last?.operation)
        #expect(queued.fields == ["text": .string("final")])
        await #expect(throws: NotesError.needsModelVersion(command: "pin", version: .version2)) { try await old.setPinned(id: id, true) }
        await old.close()

        let again = try await NotesRepository.open(directory: directory)
        let notes = try await again.snapshot().notes
        #expect(notes.map(\.text) == ["final"])
        #expect(notes.map(\.pinned) == [true])
        await again.close()
    }

    @Test("list --json: version 1 prints only id and text, version 2 adds pinned")
    func jsonKeysByVersion() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-versions"); defer { scratch.remove() }
        let directory = scratch.file("device")
        let added = await run(["add", "buy", "milk", "--dir", directory])
        #expect(added.status == 0, "\(added.output.error)")
        let id = added.output.standard.trimmingCharacters(in: .newlines)
        #expect(await run(["pin", id, "--dir", directory]).status == 0)

        let old = await run(["list", "--json", "--model-version", "1", "--dir", directory])
        #expect(old.status == 0, "\(old.output.error)")
        #expect(old.output.standard == #"[{"id":"\#(id)","text":"buy milk"}]"# + "\n")
        let oldObjects = try #require(try JSONSerialization.jsonObject(with: Data(old.output.standard.utf8)) as? [[String: Any]])
        #expect(oldObjects.map { Set($0.keys) } == [["id", "text"]])

        let current = await run(["--model-version", "2", "list", "--json", "--dir", directory])
        #expect(current.output.standard == #"[{"id":"\#(id)","text":"buy milk","pinned":true}]"# + "\n")
        let currentObjects = try #require(try JSONSerialization.jsonObject(with: Data(current.output.standard.utf8)) as? [[String: Any]])
        #expect(currentObjects.map { Set($0.keys) } == [["id", "text", "pinned"]])
        #expect(await run(["list", "--dir", directory]).output.standard == "\(id)  [pinned] buy milk\n")
        #expect(await run(["list", "--model-version", "1", "--dir", directory]).output.standard == "\(id)  buy milk\n")
    }

    @Test("--model-version takes 1 or 2, defaults to 2, and pin and unpin parse only in version 2")
    func modelVersionParsing() throws {
        #expect(try NotesCommand.parse(["list", "--dir", "a"]).modelVersion == .version2)
        #expect(try NotesCommand.parse(["list", "--dir", "a", "--model-version", "1"]).modelVersion == .version1)
        #expect(try NotesCommand.parse(["--model-version=2", "list", "--dir", "a"]).modelVersion == .version2)
        #expect(try NotesCommand.parse(["pin", "n1", "--dir", "a"]).action == .pin(id: "n1", pinned: true))
        #expect(try NotesCommand.parse(["unpin", "n1", "--dir", "a", "--model-version", "2"]).action == .pin(id: "n1", pinned: false))
        for bad in ["3", "abc", "0", "", "1.0"] {
            #expect(throws: CommandLineError.invalidValue(option: "--model-version", value: bad, expected: "a model version, 1 or 2"), "\(bad)") {
                try NotesCommand.parse(["list", "--dir", "a", "--model-version", bad])
            }
        }
        #expect(throws: CommandLineError.invalidCombination("pin needs --model-version 2 (model version 1 has no pins)")) {
            try NotesCommand.parse(["pin", "n1", "--dir", "a", "--model-version", "1"])
        }
        #expect(throws: CommandLineError.invalidCombination("unpin needs --model-version 2 (model version 1 has no pins)")) {
            try NotesCommand.parse(["unpin", "n1", "--dir", "a", "--model-version", "1"])
        }
        #expect(throws: CommandLineError.missingArgument("ID")) { try NotesCommand.parse(["pin", "--dir", "a"]) }
        #expect(throws: CommandLineError.unexpectedArgument("n2")) { try NotesCommand.parse(["unpin", "n1", "n2", "--dir", "a"]) }
    }

    @Test("a bad --model-version, and pin on version 1, exit 64 with one line on standard error and nothing done")
    func modelVersionUsageErrors() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-versions"); defer { scratch.remove() }
        let directory = scratch.file("device")
        let bad = await run(["list", "--model-version", "3", "--dir", directory])
        #expect(bad.status == 64)
        #expect(bad.output.standard.isEmpty)
        #expect(bad.output.error == "notes: --model-version needs a model version, 1 or 2, not \"3\" (notes --help for usage)\n")
        let word = await run(["list", "--model-version", "abc", "--dir", directory])
        #expect(word.status == 64)
        #expect(word.output.error.contains("\"abc\""))
        let pin = await run(["pin", "n1", "--model-version", "1", "--dir", directory])
        #expect(pin.status == 64)
        #expect(pin.output.error == "notes: pin needs --model-version 2 (model version 1 has no pins) (notes --help for usage)\n")
        #expect(!FileManager.default.fileExists(atPath: directory), "a usage mistake opens no directory")
    }

    @Test("a conflict that lost a pin or an unpin is marked as such, not as a lost delete")
    func lostPinMarker() {
        #expect(NotesListing.marker(NoteConflict(noteID: "n1", lostText: nil, lostPinned: true, shape: "update/update"))
                == "[conflict: your pin was not kept]")
        #expect(NotesListing.marker(NoteConflict(noteID: "n1", lostText: "mine", lostPinned: false, shape: "update/update"))
                == "[conflict: your text \"mine\" and your unpin were not kept]")
        #expect(NotesListing.marker(NoteConflict(noteID: "n1", lostText: nil, shape: "delete/update")) == "[conflict: your delete was not kept]")
    }
}
