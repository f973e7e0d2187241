import Foundation
@testable import NotesApp
import SyncJournal
import SyncJournalTesting
import Testing

/// Two devices on different model versions of the app, syncing through the
/// in-memory reference server: device A has not updated (version 1), device B
/// has (version 2).
@Suite("notes: a version-1 device and a version-2 device sync through one server", .timeLimit(.minutes(5)))
struct NotesTwoVersionsSyncTests {
    /// Which device syncs first after both edited offline.
    enum Order: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case versionOneFirst, versionTwoFirst
        var testDescription: String { rawValue }
    }

    @Test("edits made offline on both versions converge, in either sync order: B's pins survive A's text edits, A lists every note B created",
          arguments: Order.allCases)
    func offlineEditsConverge(order: Order) async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-versions"); defer { scratch.remove() }
        let server = ReferenceServer()
        let deviceA = try await NotesRepository.open(directory: scratch.file("a"), modelVersion: .version1)
        let deviceB = try await NotesRepository.open(directory: scratch.file("b"), modelVersion: .version2)
        let engineA = deviceA.engine(transport: server.transport(user: "u1"))
        let engineB = deviceB.engine(transport: server.transport(user: "u1"))
        func sync(_ engine: SyncEngine) async {
            let outcome = await engine.sync()
            guard case .ok(_, _, let conflicts) = outcome else { Issue.record("sync: \(outcome)"); return }
            #expect(conflicts == 0, "a text edit and a pin merge")
        }

        // Online: each device creates a note, B pins its own, and both sync.
        let fromA = try await deviceA.add(text: "call the plumber")
        let fromB = try await deviceB.add(text: "buy milk")
        try await deviceB.setPinned(id: fromB, true)
        await sync(engineA)
        await sync(engineB)
        await sync(engineA)

        // Offline: A edits the text of the note B pinned and creates one; B pins A's note and creates one.
        try await deviceA.edit(id: fromB, text: "buy oat milk")
        let laterA = try await deviceA.add(text: "water the plants")
        try await deviceB.setPinned(id: fromA, true)
        let laterB = try await deviceB.add(text: "book the dentist")

        switch order {
        case .versionOneFirst:
            await sync(engineA); await sync(engineB); await sync(engineA)
        case .versionTwoFirst:
            await sync(engineB); await sync(engineA); await sync(engineB)
        }

        let onA = try await deviceA.snapshot()
        let onB = try await deviceB.snapshot()
        #expect(onA.unreadable.isEmpty && onB.unreadable.isEmpty)
        #expect(onA.conflicts.isEmpty && onB.conflicts.isEmpty)
        let texts = [fromA: "call the plumber", fromB: "buy oat milk", laterA: "water the plants", laterB: "book the dentist"]
        // Every edit reaches both devices, as far as each version can show it.
        #expect(Dictionary(uniqueKeysWithValues: onA.notes.map { ($0.id, $0.text) }) == texts)
        #expect(Dictionary(uniqueKeysWithValues: onB.notes.map { ($0.id, $0.text) }) == texts)
        #expect(onA.notes.allSatisfy { $0.pinned == nil }, "version 1 shows no pins")
        #expect(Dictionary(uniqueKeysWithValues: onB.notes.map { ($0.id, $0.pinned) })
                == [fromA: true, fromB: true, laterA: false, laterB: false])
        // A lists in creation order; B lists the same notes, its two pinned ones first.
        let pinnedIDs: Set = [fromA, fromB]
        #expect(Set(onB.notes.prefix(2).map(\.id)) == pinnedIDs)
        #expect(onB.notes.map(\.id).filter { !pinnedIDs.contains($0) } == onA.notes.map(\.id).filter { !pinnedIDs.contains($0) })
        #expect(onB.notes.prefix(2).map(\.id) == onA.notes.map(\.id).filter { pinnedIDs.contains($0) })

        // The stored note B pinned and A edited holds both edits, under the names every version reads.
        let stored = try #require(try await deviceA.store.record("note", id: fromB))
        #expect(stored.fields["text"] == .string("buy oat milk"))
        #expect(stored.fields["pinned"] == .bool(true), "A's journal keeps the pin it cannot show")
        #expect(stored.fields["body"] == nil)
        await deviceA.close()
        await deviceB.close()
    }
}
