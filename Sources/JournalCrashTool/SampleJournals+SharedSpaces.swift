import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

extension SampleJournals {
    /// The shared space the user loses in the shared-spaces sample.
    package static let tripSpace = SpaceID("5a1e0c3b-7d2f-4e81-9b6a-0c4d8e2f1a37")!
    /// The shared space the user keeps in the shared-spaces sample.
    package static let clubSpace = SpaceID("b07c1d9e-3f5a-4c2b-8e71-6d0a9f4b2c58")!

    /// Format 2.5's shared spaces: two spaces described, a page of rows of
    /// each (one row with a model version, one tombstone), personal rows and
    /// edits beside them, edits in both spaces (one sent), rows of a space
    /// forgotten by a re-pull, a newer description, an acknowledgement in a
    /// space, and the loss of one space with a sent and an unsent edit
    /// queued in it, which become rejections.
    static func sharedSpaceEvents() -> StoreEventRecorder {
        let s = storeServerStamp
        var store = StoreEventRecorder()
        store.generator = SeededGenerator(seed: 25)
        let trip = tripSpace, club = clubSpace
        store.record(.pulled(kind: "pin", rows: [
            ServerRow(kind: "pin", id: "p-home", fields: ["name": .string("Home")], updatedAt: s + 1),
        ], cursor: PullCursor(updatedAt: s + 1, id: "p-home")))
        store.record(.spaceDescribed(Space(id: trip, name: "Lisbon trip", role: .editor, members: [
            SpaceMember(user: "ana", role: .owner), SpaceMember(user: "ben", role: .editor), SpaceMember(user: "cleo", role: .viewer),
        ], version: s + 2)))
        store.record(.spaceDescribed(Space(id: club, name: "Book club", role: .owner, members: [
            SpaceMember(user: "ben", role: .owner),
        ], version: s + 3)))
        store.record(.pulled(kind: "pin", rows: [
            ServerRow(kind: "pin", id: "p-tram", fields: ["name": .string("Tram 28")], updatedAt: s + 4, space: trip),
            ServerRow(kind: "pin", id: "p-tasca", fields: ["name": .string("Tasca")], updatedAt: s + 5, modelVersion: 2, space: trip),
            ServerRow(kind: "pin", id: "p-gone", fields: [:], updatedAt: s + 6, deletedAt: s + 6, space: trip),
        ], cursor: PullCursor(updatedAt: s + 6, id: "p-gone"), space: trip))
        store.record(.pulled(kind: "note", rows: [
            ServerRow(kind: "note", id: "n-list", fields: ["text": .string("To read")], updatedAt: s + 7, space: club),
        ], cursor: PullCursor(updatedAt: s + 7, id: "n-list"), space: club))
        let tram = store.edit(.update, "pin", "p-tram", ["visited": .bool(true)], at: 1, in: trip)
        store.edit(.create, "pin", "p-fado", ["name": .string("Fado night")], at: 2, modelVersion: 3, in: trip)
        let list = store.edit(.update, "note", "n-list", ["text": .string("To read: Pessoa")], at: 3, in: club)
        store.edit(.update, "pin", "p-home", ["visited": .bool(true)], at: 4)
        store.record(.sent([tram, list]))
        store.record(.forgotten(kind: "pin", ids: ["p-tasca"], space: trip))
        store.record(.spaceDescribed(Space(id: club, name: "Book club", role: .owner, members: [
            SpaceMember(user: "ana", role: .editor), SpaceMember(user: "ben", role: .owner),
        ], version: s + 8)))
        store.record(.acknowledged([Acknowledgement(operationID: list, row: ServerRow(
            kind: "note", id: "n-list", fields: ["text": .string("To read: Pessoa")], updatedAt: s + 9, space: club))]))
        store.record(.spaceLost(trip))
        return store
    }

    /// The state `golden/v2.5-shared-spaces.journal` replays to.
    package static func sharedSpaceState() -> StoreState { sharedSpaceEvents().state }

    /// The state `golden/v2.5-shared-spaces-continued.journal` replays to:
    /// the shared-spaces state and the edit after its checkpoint.
    package static func sharedSpaceContinuedState() -> StoreState {
        var state = sharedSpaceState()
        for (type, payload) in sharedSpaceCheckpointRecords() where type != .checkpoint {
            // The sample's own records: a failure here is a mistake in the sample itself.
            if let event = try! StoreEvent.decode(JournalRecord(offset: 0, sequence: 1, type: type, payload: payload)) { state.apply(event) }
        }
        return state
    }

    /// The shared-spaces state checkpointed into the next generation (the
    /// kept space's cursors and description in parts 9 and 10, the lost
    /// space's edits as rejections), then one more edit in the kept space.
    static func sharedSpaceCheckpointRecords() -> [(RecordType, [UInt8])] {
        var store = sharedSpaceEvents()
        let parts = store.state.checkpointParts().map { StoreEvent.checkpoint($0) }
        store.events = []
        store.edit(.create, "note", "n-next", ["text": .string("Next month")], at: 10, in: clubSpace)
        return parts.map { ($0.recordType, $0.encodedPayload()) } + store.records
    }
}
