import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalWire

/// The wire-message fuzz target: any bytes as the body of an HTTP request or
/// reply of `journals/PROTOCOL.md`, fed to the strict JSON parser and to each
/// message's codec. The first byte picks the decoder (the rest is the body):
/// generic JSON, push request, push reply, pull request, pull page, read
/// request, read reply, error body.
///
/// The checks: nothing crashes or hangs, whatever the bytes; every failure is
/// a ``WireError``; and whatever decodes is a fixed point of the codec after
/// one round (encode, decode again, encode again: the same bytes), so the
/// writer never emits what the reader refuses or reads differently.
///
/// ```swift
/// try FuzzWireMessages.run([2] + Array(#"{"results": []}"#.utf8))
/// ```
package enum FuzzWireMessages {
    /// The target's name, as the fuzz script and the regression directory name it.
    package static let name = "wire-messages"

    static func finding(_ invariant: String, _ detail: String) -> FuzzFinding {
        FuzzFinding(target: name, invariant: invariant, detail: detail)
    }

    /// The decoders, in the order of the selector byte.
    static let decoders = ["json", "push-request", "push-reply", "pull-request", "pull-page", "read-request", "read-reply", "error-body"]

    /// Runs one input.
    ///
    /// - Throws: ``FuzzFinding`` when an invariant does not hold.
    package static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        guard let selector = bytes.first else { return }
        let body = bytes.dropFirst()
        let decoder = decoders[Int(selector) % decoders.count]
        func stable(_ encode: ([UInt8]) throws(WireError) -> [UInt8]?) throws(FuzzFinding) {
            // nil: the body did not decode, which is the common and correct outcome.
            let first: [UInt8]?
            do throws(WireError) { first = try encode(Array(body)) } catch { return }
            guard let first else { return }
            let second: [UInt8]?
            do throws(WireError) { second = try encode(first) } catch {
                throw finding("what the writer emits, the reader accepts", "\(decoder): \(error) on \(String(decoding: first, as: UTF8.self))")
            }
            if second != first {
                throw finding("encoding is a fixed point after one round", "\(decoder): \(String(decoding: first, as: UTF8.self)) became \(String(decoding: second ?? [], as: UTF8.self))")
            }
        }
        switch decoder {
        case "json": try stable { bytes throws(WireError) in try JSONParser().parse(bytes).encoded() }
        case "push-request": try stable { bytes throws(WireError) in PushRequestCodec.encode(try PushRequestCodec.decode(bytes)) }
        case "push-reply": try stable { bytes throws(WireError) in PushReplyCodec.encode(try PushReplyCodec.decode(bytes)) }
        case "pull-request": try stable { bytes throws(WireError) in PullRequestCodec.encode(try PullRequestCodec.decode(bytes)) }
        case "pull-page": try stable { bytes throws(WireError) in PullPageCodec.encode(try PullPageCodec.decode(bytes)) }
        case "read-request": try stable { bytes throws(WireError) in ReadRequestCodec.encode(try ReadRequestCodec.decode(bytes)) }
        case "read-reply": try stable { bytes throws(WireError) in ReadReplyCodec.encode(try ReadReplyCodec.decode(bytes)) }
        default: try stable { bytes throws(WireError) in ErrorBodyCodec.encode(try ErrorBodyCodec.decode(bytes)) }
        }
    }

    /// Hand-made seeds: a valid body of each message (PROTOCOL.md's shapes,
    /// every field value type), behind its selector byte.
    package static var seeds: [(name: String, bytes: [UInt8])] {
        let id = OperationID(bytes: Array(1...16))!
        let fields: [String: FieldValue] = ["title": .string("Crux é"), "grade": .int(-7), "height": .double(12.5),
                                            "nan": .double(.nan), "raw": .bytes([0, 1, 255]), "tags": .stringSet(["a", "b"]),
                                            "done": .bool(true), "none": .null,
                                            "at": .timestamp(1_764_000_000_123_456), "owner": .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
                                            "list": .array([.int(1), .array([.string("x")])]), "place": .object(["city": .string("Rome"), "zip": .null])]
        let row = ServerRow(kind: "pin", id: "p1", fields: fields, updatedAt: 1_764_000_000_123)
        let tombstone = ServerRow(kind: "pin", id: "p2", updatedAt: 1_764_000_000_124, deletedAt: 1_764_000_000_124)
        let mutations = [Mutation(operationID: id, kind: "pin", op: .create, recordID: "p1", fields: fields, baseUpdatedAt: nil),
                         Mutation(operationID: id, kind: "pin", op: .delete, recordID: "p2", fields: [:], baseUpdatedAt: 5)]
        let results = [MutationResult(operationID: id, outcome: .applied(row)),
                       MutationResult(operationID: id, outcome: .conflict(server: nil)),
                       MutationResult(operationID: id, outcome: .rejected(reason: "no", permanent: true)),
                       MutationResult(operationID: id, outcome: .duplicate), MutationResult(operationID: id, outcome: .noMatch)]
        let page = PullPage(rows: [row, tombstone], nextCursors: ["pin": PullCursor(updatedAt: 1_764_000_000_124, id: "p2")], hasMore: true)
        let bodies: [(String, [UInt8])] = [
            ("json", Array(#"{"a": [1, -2.5e3, "\u00e9", true, null, {"b": {}}]}"#.utf8)),
            ("push-request", PushRequestCodec.encode(mutations)),
            ("push-reply", PushReplyCodec.encode(results)),
            ("pull-request", PullRequestCodec.encode(PullRequest(cursors: ["pin": PullCursor(updatedAt: 3, id: "p:1"), "note": nil], limit: 500, isResync: true))),
            ("pull-page", PullPageCodec.encode(page)),
            ("read-request", ReadRequestCodec.encode(ReadRequest(kind: "pin", id: "p1"))),
            ("read-reply", ReadReplyCodec.encode(row)),
            ("error-body", Array(#"{"error": "cursor_expired", "message": "behind", "kinds": ["pin"]}"#.utf8)),
        ]
        return bodies.map { name, body in (name, [UInt8(decoders.firstIndex(of: name)!)] + body) }
    }
}
