import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

/// The golden journal of format 2.1's field values: timestamps, UUIDs, arrays and objects.
extension SampleJournals {
    /// A field of every type format 2.1 adds, the deepest nesting allowed included.
    static let typedValues: [String: FieldValue] = [
        "createdAt": .timestamp(1_764_000_000_123_456),
        "beforeEpoch": .timestamp(-1),
        "timestampMin": .timestamp(.min),
        "timestampMax": .timestamp(.max),
        "owner": .uuid(UUID(uuidString: "ce56971c-de35-4897-821e-fc0b1046c8bf")!),
        "nilUUID": .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
        "emptyArray": .array([]),
        "emptyObject": .object([:]),
        "mixed": .array([.null, .bool(true), .int(-7), .double(0.5), .string("ä"), .bytes([0xFF]), .stringSet(["b", "a"]),
                         .timestamp(0), .uuid(UUID(uuidString: "00000000-0000-4000-8000-000000000001")!), .array([.int(1)]),
                         .object(["k": .null])]),
        "address": .object(["city": .string("München"), "zip": .string("80331"), "geo": .array([.double(48.1371), .double(11.5754)])]),
        "deepest": (0..<FieldValue.maximumNestingDepth).reduce(FieldValue.string("bottom")) { inner, level in
            level % 2 == 0 ? .array([inner]) : .object(["level\(level)": inner])
        },
    ]

    /// A device that pulls a note holding typed values, creates one, and edits a nested
    /// object of each.
    static func typedValueEvents() -> StoreEventRecorder {
        let s = storeServerStamp
        var store = StoreEventRecorder()
        store.record(.pulled(kind: "note", rows: [
            ServerRow(kind: "note", id: "n-server", fields: ["title": .string("From the server"),
                                                              "address": .object(["city": .string("Rome")]),
                                                              "seenAt": .array([.timestamp(1_763_990_000_000_000)])],
                      updatedAt: s + 1),
        ], cursor: PullCursor(updatedAt: s + 1, id: "n-server")))
        store.edit(.create, "note", "n-local", typedValues, at: 1)
        store.edit(.update, "note", "n-server", ["address": .object(["city": .string("Roma"), "zip": .string("00100")])], at: 2)
        store.edit(.update, "note", "n-local", ["mixed": .array([]), "editedAt": .timestamp(1_764_000_120_000_000)], at: 3)
        return store
    }
}
