import Foundation
import SyncJournalProtocol
import SyncJournalWire
import Testing

// Sample messages shared by the codec tests.

/// An operation id from a readable byte.
func operationID(_ n: UInt8) -> OperationID {
    OperationID(bytes: [n, 1, 2, 3, 4, 5, 0x46, 7, 0x88, 9, 10, 11, 12, 13, 14, n])!
}

/// One value of every FieldValue case, edges included.
let everyFieldValue: [String: FieldValue] = [
    "null": .null,
    "yes": .bool(true),
    "no": .bool(false),
    "zero": .int(0),
    "intMin": .int(.min),
    "intMax": .int(.max),
    "negative": .int(-42),
    "half": .double(2.5),
    "one": .double(1.0),
    "negativeZero": .double(-0.0),
    "tiny": .double(.leastNonzeroMagnitude),
    "huge": .double(.greatestFiniteMagnitude),
    "third": .double(1.0 / 3.0),
    "nan": .double(.nan),
    "inf": .double(.infinity),
    "minusInf": .double(-.infinity),
    "empty": .string(""),
    "unicode": .string("Café ☕️ 𝄞 \u{0} \"quoted\" \\ \n\t\u{1F}"),
    "bytes": .bytes([0, 1, 2, 0xFF, 0xFE]),
    "bytes1": .bytes([0xFB]),
    "bytes2": .bytes([0xFB, 0xFF]),
    "noBytes": .bytes([]),
    "set": .stringSet(["b", "a", "é", "Z"]),
    "emptySet": .stringSet([]),
    "naïve name ✓": .string("field names need not be identifiers"),
    "timestamp": .timestamp(1_764_000_000_123_456),
    "timestampMin": .timestamp(.min),
    "uuid": .uuid(UUID(uuidString: "ce56971c-de35-4897-821e-fc0b1046c8bf")!),
    "photo": .attachment(Attachment(content: ContentHash("abb0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")!, size: 5_242_880, mediaType: "image/jpeg")),
    "files": .object(["empty.txt": .attachment(Attachment(content: ContentHash("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")!, size: 0, mediaType: "text/plain"))]),
    "array": .array([.int(1), .string("a"), .null, .array([]), .double(.nan), .stringSet(["x"])]),
    "object": .object(["city": .string("Munich"), "geo": .array([.double(48.1), .double(11.5)]), "empty": .object([:])]),
]

let sampleMutations: [Mutation] = [
    Mutation(operationID: operationID(1), kind: "pin", op: .create, recordID: "p1", fields: everyFieldValue, baseUpdatedAt: nil),
    Mutation(operationID: operationID(2), kind: "pin", op: .update, recordID: "p2", fields: ["grade": .int(8)], baseUpdatedAt: 1_764_000_000_100),
    Mutation(operationID: operationID(3), kind: "note", op: .delete, recordID: "ñ:3", fields: [:], baseUpdatedAt: .min),
]

let sampleRow = ServerRow(kind: "pin", id: "p1", fields: ["title": .string("Crux"), "grade": .int(7)], updatedAt: 1_764_000_000_200)
let sampleTombstone = ServerRow(kind: "pin", id: "p3", updatedAt: .max, deletedAt: .max)

let sampleResults: [MutationResult] = [
    MutationResult(operationID: operationID(1), outcome: .applied(ServerRow(kind: "pin", id: "p1", fields: everyFieldValue, updatedAt: 5))),
    MutationResult(operationID: operationID(2), outcome: .conflict(server: sampleRow)),
    MutationResult(operationID: operationID(3), outcome: .conflict(server: nil)),
    MutationResult(operationID: operationID(4), outcome: .rejected(reason: "forbidden: pin/p3 belongs to another user", permanent: true)),
    MutationResult(operationID: operationID(5), outcome: .rejected(reason: "", permanent: false)),
    MutationResult(operationID: operationID(6), outcome: .duplicate),
    MutationResult(operationID: operationID(7), outcome: .noMatch),
    MutationResult(operationID: operationID(8), outcome: .applied(sampleTombstone)),
]

let samplePage = PullPage(rows: [sampleRow, sampleTombstone, ServerRow(kind: "note", id: "n:1", updatedAt: -5)],
                          nextCursors: ["pin": PullCursor(updatedAt: .max, id: "p3"), "note": PullCursor(updatedAt: -5, id: "n:1")],
                          hasMore: true)

let sampleRequest = PullRequest(cursors: ["pin": PullCursor(updatedAt: 1_764_000_000_123, id: "p1"), "note": nil, "täg": PullCursor(updatedAt: .min, id: "x")],
                                limit: 500, isResync: true)

/// The bytes of a string.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The error `decode` throws, or `nil` if it decodes. (Closures inside
/// `#expect` are inferred as throwing `any Error`, so the type is checked here.)
func wireError<T>(_ decode: () throws -> T) -> WireError? {
    do {
        _ = try decode()
        return nil
    } catch let error as WireError {
        return error
    } catch {
        Issue.record("not a WireError: \(error)")
        return nil
    }
}
