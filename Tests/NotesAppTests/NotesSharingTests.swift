import Foundation
@testable import NotesApp
import SyncJournal
import SyncJournalTesting
import Testing

/// A list shared between accounts: a parent who owns it, a child who edits
/// it and a grandparent who only reads it, each on a device of their own,
/// syncing through the in-memory reference server.
@Suite("notes: a list shared between three accounts", .timeLimit(.minutes(5)))
struct NotesSharingTests {
    /// The three devices and their engines.
    struct Family {
        let server = ReferenceServer()
        let scratch: TemporaryDirectory
        let dad: NotesRepository
        let kid: NotesRepository
        let grandma: NotesRepository
        let dadEngine: SyncEngine
        let kidEngine: SyncEngine
        let grandmaEngine: SyncEngine

        init() async throws {
            scratch = try TemporaryDirectory(prefix: "syncjournal-notes-sharing")
            dad = try await NotesRepository.open(directory: scratch.file("dad"))
            kid = try await NotesRepository.open(directory: scratch.file("kid"))
            grandma = try await NotesRepository.open(directory: scratch.file("grandma"))
            dadEngine = dad.engine(transport: server.transport(user: "dad"))
            kidEngine = kid.engine(transport: server.transport(user: "kid"))
            grandmaEngine = grandma.engine(transport: server.transport(user: "grandma"))
        }

        func close() async {
            await dad.close(); await kid.close(); await grandma.close()
            scratch.remove()
        }
    }

    /// Syncs once and records an issue unless the sync was ok.
    static func sync(_ engine: SyncEngine, _ who: String) async {
        let outcome = await engine.sync()
        guard case .ok = outcome else { Issue.record("\(who)'s sync: \(outcome)"); return }
    }

    @Test("the owner clears the shared list offline while an editor adds to it: after both sync, both list the editor's note and none of the cleared ones")
    func pinsRaceAcrossAccounts() async throws {
        let family = try await Family()
        let list = try await NotesSpaces(repository: family.dad, engine: family.dadEngine, server: "reference")
            .run(.spaceCreate(name: "Weekend pins"))
        #expect(list.hasPrefix("created space \"Weekend pins\" "))
        let space = try await family.dad.space(named: "Weekend pins")
        _ = try await family.dadEngine.setMember("kid", role: .editor, in: space.id)
        let yesterday = [try await family.dad.add(text: "museum", in: space.id), try await family.dad.add(text: "park", in: space.id)]
        let own = try await family.dad.add(text: "dad's own note")
        await Self.sync(family.dadEngine, "dad")
        await Self.sync(family.kidEngine, "kid")
        #expect(Set(try await family.kid.snapshot().notes.map(\.id)) == Set(yesterday), "the kid sees the shared notes, not dad's own")

        // Dad, offline, clears yesterday's notes one by one; the kid adds one at the same time.
        for id in yesterday { try await family.dad.remove(id: id) }
        let kidSpace = try await family.kid.space(named: "Weekend pins")
        let tapas = try await family.kid.add(text: "tapas bar", in: kidSpace.id)
        await Self.sync(family.kidEngine, "kid")
        await Self.sync(family.dadEngine, "dad")
        await Self.sync(family.kidEngine, "kid")

        let onDad = try await family.dad.snapshot()
        let onKid = try await family.kid.snapshot()
        #expect(Set(onDad.notes.map(\.id)) == [own, tapas])
        #expect(onKid.notes.map(\.id) == [tapas])
        #expect(onKid.notes.first?.spaceName == "Weekend pins")
        #expect(onDad.notes.first { $0.id == tapas }?.space == space.id)
        #expect(onDad.conflicts.isEmpty && onKid.conflicts.isEmpty && onDad.rejected.isEmpty && onKid.rejected.isEmpty)
        #expect(NotesListing.text(onKid) == "\(tapas)  tapas bar  (in Weekend pins)\n")
        #expect(NotesListing.json(onKid) == #"[{"id":"\#(tapas)","text":"tapas bar","pinned":false,"space":"Weekend pins"}]"#)
        await family.close()
    }

    @Test("a viewer lists the shared notes and may not add to them: the device refuses at once, naming the space")
    func viewerReadsOnly() async throws {
        let family = try await Family()
        let space = try await family.dadEngine.createSpace(named: "Weekend pins")
        _ = try await family.dadEngine.setMember("grandma", role: .viewer, in: space.id)
        let museum = try await family.dad.add(text: "museum", in: space.id)
        await Self.sync(family.dadEngine, "dad")
        await Self.sync(family.grandmaEngine, "grandma")
        #expect(try await family.grandma.snapshot().notes.map(\.id) == [museum])
        await #expect(throws: NotesError.store(.readOnlySpace(space.id))) {
            _ = try await family.grandma.add(text: "knitting club", in: space.id)
        }
        await #expect(throws: NotesError.store(.readOnlySpace(space.id))) {
            try await family.grandma.edit(id: museum, text: "museum of knitting")
        }
        #expect(try await family.grandma.snapshot().notes.map(\.text) == ["museum"])
        #expect(NotesError.store(.readOnlySpace(space.id)).exitStatus == 77, "not allowed, as a refused membership change")
        await family.close()
    }

    @Test("a member removed while offline with a queued note: after its next sync the space's notes are gone and the note is listed as not kept, with the reason")
    func removedWhileOffline() async throws {
        let family = try await Family()
        let space = try await family.dadEngine.createSpace(named: "Weekend pins")
        _ = try await family.dadEngine.setMember("kid", role: .editor, in: space.id)
        _ = try await family.dad.add(text: "museum", in: space.id)
        await Self.sync(family.dadEngine, "dad")
        await Self.sync(family.kidEngine, "kid")
        #expect(try await family.kid.snapshot().notes.count == 1)

        // The kid adds a note offline; meanwhile dad removes the kid from the list.
        let queued = try await family.kid.add(text: "arcade", in: space.id)
        let removed = try await NotesSpaces(repository: family.dad, engine: family.dadEngine, server: "reference")
            .run(.spaceRemove(space: "Weekend pins", user: "kid"))
        #expect(removed == "Weekend pins  \(space.id)  you: owner  members: dad (owner)\n")
        await Self.sync(family.kidEngine, "kid")

        let onKid = try await family.kid.snapshot()
        #expect(onKid.notes.isEmpty)
        #expect(onKid.rejected.map(\.noteID) == [queued])
        #expect(onKid.rejected.first?.edit == "add")
        // Refused by the server at the push, or left in the queue when the pull lost the space: either reason names it.
        #expect(onKid.rejected.first?.reason.contains("no access to space \(space.id)") == true, "\(onKid.rejected)")
        #expect(NotesListing.text(onKid).hasPrefix("\(queued)  (not kept: add \"arcade\": "))
        #expect(try await family.kid.store.spaces().isEmpty)
        // The note never reached the server, and dad's list is as he left it.
        await Self.sync(family.dadEngine, "dad")
        #expect(try await family.dad.snapshot().notes.map(\.text) == ["museum"])
        await family.close()
    }

    @Test("space list names each space, the user's role and every member, in text and JSON; an unknown name is its own error")
    func spaceListing() async throws {
        let family = try await Family()
        let space = try await family.dadEngine.createSpace(named: "Weekend pins")
        _ = try await family.dadEngine.setMember("kid", role: .editor, in: space.id)
        let onKid = NotesSpaces(repository: family.kid, engine: family.kidEngine, server: "reference")
        #expect(try await onKid.run(.spaceList(json: false))
                == "Weekend pins  \(space.id)  you: editor  members: dad (owner), kid (editor)\n")
        #expect(try await onKid.run(.spaceList(json: true)) == """
            [{"id":"\(space.id)","name":"Weekend pins","role":"editor","members":[{"user":"dad","role":"owner"},{"user":"kid","role":"editor"}]}]

            """)
        // Without a server, the list is what the device learned.
        #expect(try await NotesSpaces(repository: family.kid, engine: nil, server: "").run(.spaceList(json: false))
                == "Weekend pins  \(space.id)  you: editor  members: dad (owner), kid (editor)\n")
        await #expect(throws: NotesError.noSuchSpace("Holiday")) { _ = try await family.kid.space(named: "Holiday") }
        // A space is found by its id as well as by its name.
        #expect(try await family.kid.space(named: space.id.description).name == "Weekend pins")
        await #expect(throws: NotesError.spaceRefused(server: "reference", refusal: .forbidden(space.id, role: .editor))) {
            _ = try await onKid.run(.spaceAdd(space: "Weekend pins", user: "grandma", role: .viewer))
        }
        await family.close()
    }
}
