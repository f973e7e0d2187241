import SyncJournalProtocol
import SyncJournalStore
import Testing

// `lostFields` of a custom resolution names only the fields whose local
// value is really gone: not those the policy kept or merged.

@Suite("Conflict resolution: lost fields under a custom policy")
struct ConflictLostFieldsTests {
    static let server = ServerRow(kind: "pin", id: "p1",
                                  fields: ["name": .string("Theirs"), "tags": .stringSet(["b"]), "rating": .int(3), "note": .string("same")],
                                  updatedAt: 200)
    static let update = JournalOperation(id: .random(), kind: .update, entity: "pin", recordID: "p1",
                                         fields: ["name": .string("Mine"), "tags": .stringSet(["a"]), "rating": .int(5), "note": .string("same")],
                                         baseUpdatedAt: 100, queuedAt: 0)

    static func resolve(_ decide: @escaping @Sendable (ConflictInput) -> ConflictDecision) -> ConflictResolution {
        let input = ConflictInput(operation: update, base: nil, server: server, local: update.fields)
        return ConflictResolution.resolve(input, policy: .custom(decide), newID: .random(), now: 0)
    }

    @Test("a custom policy that merges one field and keeps another loses only the field left at the server's value")
    func mergedAndKeptFieldsAreNotLost() {
        let resolution = Self.resolve { input in
            var fields = input.server?.fields ?? [:]
            fields["tags"] = .stringSet(["a", "b"])   // merged
            fields["name"] = .string("Mine")         // kept
            return .keep(fields)                     // rating stays the server's: lost
        }
        #expect(resolution.lostFields == ["rating"])
        #expect(resolution.replacement?.fields == ["name": .string("Mine"), "tags": .stringSet(["a", "b"])])
    }

    @Test("a custom policy that accepts the server's copy loses the fields whose local value differs from it, not one the server already has")
    func acceptingTheServerLosesOnlyDifferingFields() {
        let resolution = Self.resolve { _ in .acceptServer }
        #expect(resolution.lostFields == ["name", "rating", "tags"])
    }

    @Test("a custom policy that keeps every local value loses nothing")
    func keepingEverythingLosesNothing() {
        let resolution = Self.resolve { input in .keep(input.local ?? [:]) }
        #expect(resolution.lostFields.isEmpty)
    }
}
