import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// A store's shared spaces through its journal: what replay rebuilds after a
/// clean close and after a crash, what a checkpoint keeps of a lost space,
/// and what a reader makes of a damaged 2.5 record.
@Suite("shared spaces in the store: replay, crashes, checkpoints and damage")
struct SharedSpaceStoreTests {
    typealias Kit = StoreRulesKit
    static let trip = SharedSpaceCodecTests.trip
    static let club = SharedSpaceCodecTests.club
    static let tripBytes = SharedSpaceCodecTests.tripBytes

    /// The queued edits of the space the user is about to lose.
    struct TripEdits {
        var sent: OperationID
        var unsent: OperationID
    }

    /// Brings `store` to meet two spaces: personal rows, both spaces
    /// described, a page of rows of each, edits in both and in the personal
    /// space, the trip space's first edit sent.
    static func meetSpaces(_ store: LocalStore) async throws -> TripEdits {
        try await store.applyPulledPage(kind: "pin", rows: [ServerRow(kind: "pin", id: "home", fields: ["name": .string("Home")], updatedAt: 10)],
                                        cursor: PullCursor(updatedAt: 10, id: "home"))
        try await store.applySpaces(described: [
            Space(id: trip, name: "Lisbon trip", role: .editor,
                  members: [SpaceMember(user: "ana", role: .owner), SpaceMember(user: "ben", role: .editor)], version: 11),
            Space(id: club, name: "Book club", role: .owner, members: [SpaceMember(user: "ben", role: .owner)], version: 12),
        ], lost: [])
        try await store.applyPulledPages([
            LocalStore.PulledKindPage(kind: "pin", rows: [
                ServerRow(kind: "pin", id: "tram", fields: ["name": .string("Tram 28")], updatedAt: 13, space: trip),
                ServerRow(kind: "pin", id: "tasca", fields: ["name": .string("Tasca")], updatedAt: 14, modelVersion: 2, space: trip),
            ], cursor: PullCursor(updatedAt: 14, id: "tasca"), space: trip),
            LocalStore.PulledKindPage(kind: "note", rows: [
                ServerRow(kind: "note", id: "list", fields: ["text": .string("To read")], updatedAt: 15, space: club),
            ], cursor: PullCursor(updatedAt: 15, id: "list"), space: club),
        ])
        let tram = try await store.update("pin", id: "tram", changes: ["visited": .bool(true)], in: trip)
        let fado = try await store.create("pin", id: "fado", fields: ["name": .string("Fado night")], in: trip)
        try await store.update("note", id: "list", changes: ["text": .string("To read: Pessoa")], in: club)
        try await store.update("pin", id: "home", changes: ["visited": .bool(true)])
        try await store.beginSending([tram.operation])
        await store.finishSending([tram.operation])
        return TripEdits(sent: tram.operation, unsent: fado.operation)
    }

    /// What the app sees once the trip space is lost, checked on `store`.
    static func expectTripLost(_ store: LocalStore, _ edits: TripEdits, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await store.records("pin", in: trip).isEmpty, sourceLocation: sourceLocation)
        #expect(try await store.space(trip) == nil, sourceLocation: sourceLocation)
        #expect(try await store.spaces().map(\.id) == [club], sourceLocation: sourceLocation)
        let state = try await store.currentState()
        #expect(state.spaceCursors[trip] == nil && state.spaceCursors[club] != nil, sourceLocation: sourceLocation)
        let rejections = try await store.rejections()
        #expect(rejections.map(\.operation.id) == [edits.sent, edits.unsent], "in queue order", sourceLocation: sourceLocation)
        #expect(rejections.allSatisfy { $0.reason == "no access to space \(trip): membership ended" }, sourceLocation: sourceLocation)
        let queued = try await store.outboxOperations().map(\.operation.key)
        #expect(queued == [RecordKey(kind: "note", id: "list", space: club), RecordKey(kind: "pin", id: "home")], sourceLocation: sourceLocation)
        #expect(try await store.record("note", id: "list", in: club)?.fields["text"] == .string("To read: Pessoa"), sourceLocation: sourceLocation)
        #expect(try await store.record("pin", id: "home")?.fields["visited"] == .bool(true), sourceLocation: sourceLocation)
    }

    @Test("a reconciliation with a server that lost every row re-uploads each record into its own space: shared rows into theirs, personal rows into the personal space")
    func reuploadsKeepTheirSpace() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            _ = try await Self.meetSpaces(store)
            let state = try await store.currentState()
            let plan = state.reuploadPlan(serverRows: [:], kinds: ["pin", "note"], sameHistory: false, queuedAt: 1, makeID: { .random() })
            let uploaded = Set(plan.uploads.map(\.key))
            #expect(uploaded.contains(RecordKey(kind: "pin", id: "tasca", space: Self.trip)))
            #expect(!uploaded.contains(RecordKey(kind: "pin", id: "tasca")), "never into the personal space")
            #expect(uploaded.isSubset(of: Set(state.snapshot.keys).union(state.outbox.keys)))
            try await store.close()
        }
    }

    @Test("a lost space's rows, cursors and description leave, its queued edits (sent or not) become rejections in queue order, reopening replays the same state, and losing it again journals nothing")
    func lossReplays() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let edits = try await Self.meetSpaces(store)
            #expect(try await store.records("pin", in: Self.trip).map(\.id) == ["fado", "tasca", "tram"])
            try await store.applySpaces(described: [], lost: [Self.trip])
            try await Self.expectTripLost(store, edits)
            let records = try Kit.recordCount(scratch.journal)
            try await store.applySpaces(described: [], lost: [Self.trip])
            #expect(try Kit.recordCount(scratch.journal) == records)
            let reopened = try await LocalStoreCompactionTests.reopen(store)
            try await Self.expectTripLost(reopened, edits)
            try await reopened.close()
        }
    }

    @Test("after a crash once the loss is journaled, in every state a power cut can leave, the store reopens to the live state, the rejections included")
    func lossSurvivesACrash() async throws {
        let disk = SimulatedDisk()
        disk.createDirectory("/device")
        let path = "/device/store.journal"
        func options(_ disk: SimulatedDisk) -> LocalStore.Options {
            LocalStore.Options(system: disk.process(), clock: StillClock(), upkeep: .off, preallocationBytes: 4096)
        }
        let store = try await LocalStore.open(path: path, options: options(disk))
        let edits = try await Self.meetSpaces(store)
        try await store.applySpaces(described: [], lost: [Self.trip])
        let live = try await store.currentState()
        var modes: [SimulatedDisk.CrashMode] = [.processCrash, .loseUnsynced]
        let states = disk.powerLossStates()
        if states.stateCount <= 1_024 { modes += Array(states) }
        for mode in modes {
            let copy = disk.snapshot()
            copy.crash(mode)
            let reopened = try await LocalStore.open(path: path, options: options(copy))
            #expect(await reopened.status == .ready, "\(mode)")
            #expect(try await reopened.currentState() == live, "\(mode)")
            try await Self.expectTripLost(reopened, edits)
            try await reopened.close()
        }
        try await store.close()
    }

    @Test("a checkpoint after the loss holds nothing of the lost space but its edits as rejections, and reopens to the same state")
    func checkpointDropsTheLostSpace() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let edits = try await Self.meetSpaces(store)
            try await store.applySpaces(described: [], lost: [Self.trip])
            let live = try await store.currentState()
            try await store.checkpoint()
            try await store.close()

            var rejected: [OperationID] = []
            var keptSpaces: [SpaceID] = []
            var spaceCursorParts: [SpaceID] = []
            for record in try Kit.records(scratch.journal) {
                let event = try StoreEvent.decode(record)
                // Only a rejection still names the lost space.
                if case .checkpoint(.rejections(let rejections))? = event {
                    rejected += rejections.map(\.operation.id)
                    continue
                }
                #expect(!Self.contains(record.payload, Self.tripBytes), "record \(record.sequence) (\(record.type.name)) still names the lost space")
                switch event {
                case .checkpoint(.spaces(let spaces))?: keptSpaces += spaces.map(\.id)
                case .checkpoint(.spaceCursors(let space, _))?: spaceCursorParts.append(space)
                case .checkpoint?, nil: break
                case let other?: Issue.record("the checkpointed journal holds \(other)")
                }
            }
            #expect(rejected == [edits.sent, edits.unsent])
            #expect(keptSpaces == [Self.club])
            #expect(spaceCursorParts == [Self.club])

            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.currentState() == live)
            try await Self.expectTripLost(reopened, edits)
            try await reopened.close()
        }
    }

    @Test("a journal cut at every byte inside a 2.5 record is damage at that record, never read, and a torn tail replays to the state before it; every flipped bit of one is corruption replay refuses, never a different record")
    func damagedSpaceRecordsAreReported() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            _ = try await Self.meetSpaces(store)
            try await store.applySpaces(described: [], lost: [Self.trip])
            try await store.close()
            let original = try #require(Kit.bytes(scratch.journal))
            let records = try JournalReader(path: scratch.journal, understands: StoreEvent.isUnderstood).readAll().records
            // The records that hold a space: the four 2.5 types, and edits of a space.
            let targets = records.indices.filter { index in
                (0x0105...0x0108).contains(records[index].type.rawValue) || Self.contains(records[index].payload, Self.tripBytes)
            }
            #expect(Set(targets.map { records[$0].type.rawValue }).isSuperset(of: [0x0105, 0x0107, 0x0108, 0x0001]))

            let path = scratch.file("damaged.journal")
            func write(_ bytes: [UInt8]) { _ = FileManager.default.createFile(atPath: path, contents: Data(bytes)) }
            var wrong: [String] = []
            var cuts = 0, flips = 0
            for index in targets {
                let record = records[index]
                let start = Int(record.offset)
                write(Array(original.prefix(start)))
                let before = try Replayer.replay(path: path).state
                for cut in (start + 1)..<(start + record.length) {
                    write(Array(original.prefix(cut)))
                    let (report, read) = try JournalReader(path: path, understands: StoreEvent.isUnderstood).readAll()
                    let place = "record \(record.sequence) cut at \(cut)"
                    if read != Array(records.prefix(index)) { wrong.append("\(place): read \(read.count) records") }
                    switch report.status {
                    case .tornTail(let offset, _) where offset == Int64(start):
                        if try Replayer.replay(path: path).state != before { wrong.append("\(place): another state") }
                    case .corrupt(let offset, _) where offset == Int64(start):
                        // A closed journal never ends inside a record: damage, and replay refuses it.
                        if (try? Replayer.replay(path: path)) != nil { wrong.append("\(place): replayed") }
                    default:
                        wrong.append("\(place): \(report.status)")
                    }
                    cuts += 1
                }
                for byte in start..<(start + record.length) {
                    await Task.yield()
                    for bit in 0..<8 {
                        var flipped = original
                        flipped[byte] ^= UInt8(1) << UInt8(bit)
                        write(flipped)
                        let (report, read) = try JournalReader(path: path, understands: StoreEvent.isUnderstood).readAll()
                        let place = "record \(record.sequence), bit \(bit) of byte \(byte)"
                        if case .corrupt = report.status {} else { wrong.append("\(place): \(report.status)") }
                        if read != Array(records.prefix(read.count)) || read.count > index { wrong.append("\(place): read a record that differs") }
                        if (try? Replayer.replay(path: path)) != nil { wrong.append("\(place): replayed") }
                        flips += 1
                    }
                }
            }
            #expect(wrong.isEmpty, "\(wrong.count) damaged journals misread; e.g. \(wrong.prefix(3))")
            let bytes = targets.map { records[$0].length }.reduce(0, +)
            #expect(cuts == bytes - targets.count && flips == 8 * bytes, "\(cuts) cuts, \(flips) flips of \(bytes) bytes")
        }
    }

    /// Whether `bytes` holds `pattern` anywhere.
    static func contains(_ bytes: [UInt8], _ pattern: [UInt8]) -> Bool {
        guard bytes.count >= pattern.count else { return false }
        return (0...(bytes.count - pattern.count)).contains { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }
}
