import Foundation
@testable import NotesApp
import SyncJournalTesting
import Testing

@Suite("notes: order, listing and the device's journal")
struct NotesListingTests {
    @Test("version 1's notes order by creation time, and by id when created in the same millisecond")
    func creationOrder() {
        let notes = [NoteVersion1(id: "b", text: "", created: 20), NoteVersion1(id: "z", text: "", created: 10),
                     NoteVersion1(id: "a", text: "", created: 20), NoteVersion1(id: "c", text: "", created: 5)]
        #expect(notes.sorted().map(\.id) == ["c", "z", "a", "b"])
    }

    @Test("version 2's notes order pinned first, then by creation time, then by id")
    func pinnedFirstOrder() {
        let notes = [Note(id: "b", body: "", created: 20), Note(id: "z", body: "", created: 10),
                     Note(id: "p", body: "", created: 30, pinned: true), Note(id: "a", body: "", created: 20),
                     Note(id: "q", body: "", created: 1, pinned: true), Note(id: "c", body: "", created: 5)]
        #expect(notes.sorted().map(\.id) == ["q", "p", "c", "z", "a", "b"])
    }

    @Test("the text listing is one line per note, a conflict in brackets after its note, and a line for a conflict whose note is gone")
    func textListing() {
        let snapshot = NotesSnapshot(
            notes: [ListedNote(id: "n1", text: "two\nlines", created: 1), ListedNote(id: "n2", text: "kept", created: 2)],
            conflicts: [NoteConflict(noteID: "n2", lostText: "mine", shape: "update/update"),
                        NoteConflict(noteID: "n3", lostText: "gone", shape: "update/delete")])
        #expect(NotesListing.text(snapshot) == """
            n1  two lines
            n2  kept  [conflict: your text "mine" was not kept]
            n3  (deleted on another device)  [conflict: your text "gone" was not kept]

            """)
        #expect(NotesListing.text(NotesSnapshot(notes: [], conflicts: [])) == "(no notes)\n")
    }

    @Test("the JSON listing is one array of id and text, with conflicts only on a note that has them, and parses back")
    func jsonListing() throws {
        let snapshot = NotesSnapshot(
            notes: [ListedNote(id: "n1", text: "say \"hi\"\n", created: 1), ListedNote(id: "n2", text: "kept", created: 2)],
            conflicts: [NoteConflict(noteID: "n2", lostText: nil, shape: "delete/update")])
        let json = NotesListing.json(snapshot)
        #expect(json == #"[{"id":"n1","text":"say \"hi\"\n"},{"id":"n2","text":"kept","conflicts":[{"shape":"delete/update","lostText":null}]}]"#)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(parsed.first?["text"] as? String == "say \"hi\"\n")
    }

    @Test("a device's notes survive reopening its directory, in creation order, with edits and deletes applied")
    func reopen() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let directory = scratch.file("device")
        let first = try await NotesRepository.open(directory: directory)
        let kept = try await first.add(text: "kept")
        let removed = try await first.add(text: "removed")
        try await first.edit(id: kept, text: "kept, edited")
        try await first.remove(id: removed)
        await first.close()

        let reopened = try await NotesRepository.open(directory: directory)
        let snapshot = try await reopened.snapshot()
        #expect(snapshot.notes.map(\.id) == [kept])
        #expect(snapshot.notes.map(\.text) == ["kept, edited"])
        await #expect(throws: NotesError.noteNotFound(id: removed)) { try await reopened.edit(id: removed, text: "x") }
        await #expect(throws: NotesError.noteNotFound(id: removed)) { try await reopened.remove(id: removed) }
        await reopened.close()
    }

    @Test("a note stored in a shape this version cannot read is listed as unreadable, not dropped, and the readable notes still list")
    func unreadableNote() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let repository = try await NotesRepository.open(directory: scratch.file("device"))
        let readable = try await repository.add(text: "fine")
        // Another client wrote the text as a number (reported under version 2's name for it).
        try await repository.store.create("note", id: "odd", fields: ["text": .int(7), "created": .int(1)])
        let snapshot = try await repository.snapshot()
        #expect(snapshot.notes.map(\.id) == [readable])
        #expect(snapshot.unreadable.count == 1)
        #expect(snapshot.unreadable.first?.hasPrefix("note/odd at body: ") == true, "\(snapshot.unreadable)")
        #expect(NotesListing.text(snapshot).hasSuffix("(cannot read \(snapshot.unreadable[0]))\n"))
        await #expect(throws: NotesError.self) { try await repository.edit(id: "odd", text: "x") }
        await repository.close()
    }

    @Test("opening a directory another repository holds fails with journalLocked")
    func locked() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes"); defer { scratch.remove() }
        let holder = try await NotesRepository.open(directory: scratch.file("device"))
        await #expect(throws: NotesError.journalLocked(directory: scratch.file("device"))) {
            _ = try await NotesRepository.open(directory: scratch.file("device"))
        }
        await holder.close()
    }
}
