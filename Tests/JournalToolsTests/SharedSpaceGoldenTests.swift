import Foundation
import JournalCrashTool
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTestSupport
import Testing

/// The 2.5 golden journals read back to the state they were made from,
/// `journal-dump` shows their spaces, and journals that never met a space
/// keep the bytes 2.4 wrote.
@Suite("shared spaces: golden journals and journal-dump")
struct SharedSpaceGoldenTests {
    static func golden(_ name: String) -> String {
        BuiltTool.packageRoot.appendingPathComponent("journals/golden/\(name).journal").path
    }

    @Test("the 2.5 golden journal replays to exactly the state its events build, and the checkpoint file continuing it to that state and its one edit")
    func goldenReplaysToItsState() throws {
        let replayed = try Replayer.replay(path: Self.golden("v2.5-shared-spaces")).state
        let expected = SampleJournals.sharedSpaceState()
        #expect(replayed == expected)
        // What the sample was made to hold: a kept space, a lost one whose edits are rejections.
        #expect(replayed.spaces.keys.sorted(by: <) == [SampleJournals.clubSpace])
        #expect(replayed.spaceCursors.keys.sorted(by: <) == [SampleJournals.clubSpace])
        #expect(replayed.rejections.count == 2 && replayed.rejections.allSatisfy { $0.operation.space == SampleJournals.tripSpace })
        #expect(!replayed.snapshot.keys.contains { $0.space == SampleJournals.tripSpace })
        #expect(replayed.snapshot.keys.contains { $0.space == SampleJournals.clubSpace })

        let continued = try Replayer.replay(path: Self.golden("v2.5-shared-spaces-continued"))
        #expect(continued.state == SampleJournals.sharedSpaceContinuedState())
        let parts = try JournalReader(path: Self.golden("v2.5-shared-spaces-continued")).readAll().records
            .filter { $0.type == .checkpoint }.map { $0.payload.first }
        #expect(parts.contains(9) && parts.contains(10), "the checkpoint holds parts 9 and 10")
    }

    @Test("every store record of the 2.x golden journals, which never met a space, re-encodes to the exact bytes 2.4 wrote")
    func olderGoldensKeepTheirBytes() throws {
        var checked = 0
        for name in ["v2-all-types", "v2-conflicts", "v2-continued", "v2.1-typed-values", "v2.1-transactions",
                     "v2.3-model-versions", "v2.4-server-identity"] {
            for record in try JournalReader(path: Self.golden(name), understands: StoreEvent.isUnderstood).readAll().records {
                guard let event = try StoreEvent.decode(record) else { continue }
                #expect(event.encodedPayload() == record.payload, "\(name) record \(record.sequence) (\(record.type.name))")
                #expect(!(0x0105...0x0108).contains(record.type.rawValue))
                checked += 1
            }
        }
        #expect(checked > 50)
    }

    @Test("journal-dump shows the 2.5 records and the space of each operation and row, in text and JSON, and the spaces in the rebuilt state")
    func dumpShowsSpaces() throws {
        let trip = SampleJournals.tripSpace.description, club = SampleJournals.clubSpace.description
        let text = try BuiltTool.run("journal-dump", [Self.golden("v2.5-shared-spaces")])
        #expect(text.status == 0)
        for line in ["space     space \(trip) \"Lisbon trip\", editor, version",
                     "member cleo: viewer",
                     "space-rows (3 pin rows in space \(trip), cursor",
                     "space-forgotten (1 pin row in space \(trip) the server no longer has)",
                     "space-lost membership of space \(trip) ended",
                     "visited=true in space \(trip)"] {
            #expect(text.standardOutput.contains(line), "text lacks \(line)")
        }
        // A personal edit shows no space.
        #expect(text.standardOutput.split(separator: "\n").contains { $0.contains("p-home") && $0.contains("visited=true") && !$0.contains("in space") })

        let json = try BuiltTool.run("journal-dump", ["--json", Self.golden("v2.5-shared-spaces")])
        #expect(json.status == 0)
        for member in ["\"type\":\"space-lost\",", "\"type\":\"space\",", "\"type\":\"space-rows\",", "\"type\":\"space-forgotten\",",
                       "\"space\":{\"id\":\"\(club)\",\"name\":\"Book club\",\"role\":\"owner\"",
                       "\"recordId\":\"p-tram\",\"updatedAt\":", "\"space\":\"\(trip)\",\"fields\":{\"visited\":true}"] {
            #expect(json.standardOutput.contains(member), "JSON lacks \(member)")
        }

        let state = try BuiltTool.run("journal-dump", ["--state", Self.golden("v2.5-shared-spaces-continued")])
        #expect(state.status == 0)
        #expect(state.standardOutput.contains("cursors in space \(club):"))
        #expect(state.standardOutput.contains("spaces:   1, as the server last described them"))
        #expect(state.standardOutput.contains("no access to space \(trip): membership ended"))
        let stateJSON = try BuiltTool.run("journal-dump", ["--state", "--json", Self.golden("v2.5-shared-spaces-continued")])
        #expect(stateJSON.standardOutput.contains("\"spaceCursors\":{\"\(club)\":{\"note\":"))
        #expect(stateJSON.standardOutput.contains("\"recordId\":\"n-next\",\"space\":\"\(club)\""))
    }
}
