import Testing
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// A row without its stamps: the two servers issue different ones.
private struct UnstampedRow: Hashable {
    var kind: String
    var id: String
    var fields: [String: FieldValue]
    var isTombstone: Bool
    init(_ row: ServerRow) {
        kind = row.kind
        id = row.id
        fields = row.fields
        isTombstone = row.isTombstone
    }
}

/// An outcome without stamps.
private enum UnstampedOutcome: Hashable {
    case applied(UnstampedRow)
    case conflict(UnstampedRow?)
    case rejected(String, Bool)
    case other(String)
    init(_ outcome: MutationOutcome) {
        switch outcome {
        case .applied(let row): self = .applied(UnstampedRow(row))
        case .conflict(let row): self = .conflict(row.map(UnstampedRow.init))
        case .rejected(let reason, let permanent): self = .rejected(reason, permanent)
        case .duplicate: self = .other("duplicate")
        case .noMatch: self = .other("noMatch")
        }
    }
}

@Suite("SQLite storage against the ReferenceServer")
struct DifferentialTests {
    /// One side of the comparison: its mutations (bases are its own stamps) and the stamps it issued.
    /// What one server answered so far: per user (each has their own
    /// personal records) and record, the last stamp seen.
    private struct Side {
        var stamps: [String: [RecordKey: Int64]] = [:]
        mutating func learn(_ results: [MutationResult], user: String) {
            for result in results {
                switch result.outcome {
                case .applied(let row), .conflict(server: .some(let row)): stamps[user, default: [:]][row.key] = row.updatedAt
                default: break
                }
            }
        }
    }

    private enum Base { case current, stale, none }

    @Test("random mutation sequences (two users, resends, stale bases) give the ReferenceServer's outcomes and rows, modulo stamps",
          arguments: 1...12)
    func sameOutcomes(seed: Int) async throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-server"); defer { directory.remove() }
        let storage = try SQLiteStorage(path: directory.file("sync.sqlite"))
        let reference = ReferenceServer()
        var random = SeededGenerator(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15)
        var referenceSide = Side()
        var sqliteSide = Side()
        var sent: [(user: String, reference: Mutation, sqlite: Mutation)] = []
        let users = ["u1", "u2"]
        let ids = ["a", "b", "c", "d"]
        // A shared space no one is a member of: its mutations are refused.
        let closed = SpaceID("5d41402a-bc4b-4a76-b971-9d911017c592")!
        var seen: Set<String> = []
        for step in 0..<80 {
            let user = users[Int(random.next() % 2)]
            var referenceBatch: [Mutation] = []
            var sqliteBatch: [Mutation] = []
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let earlier = sent.filter { $0.user == user }
                if !earlier.isEmpty && random.next() % 5 == 0 {
                    let resend = earlier[Int(random.next() % UInt64(earlier.count))]
                    referenceBatch.append(resend.reference)
                    sqliteBatch.append(resend.sqlite)
                    continue
                }
                let key = RecordKey(kind: random.next() % 3 == 0 ? "note" : "pin", id: ids[Int(random.next() % 4)],
                                    space: random.next() % 8 == 0 ? closed : .personal)
                let op: OperationKind = [.create, .update, .delete][Int(random.next() % 3)]
                let base: Base = [.current, .current, .stale, .none][Int(random.next() % 4)]
                var fields: [String: FieldValue] = [:]
                if op != .delete {
                    for name in ["title", "grade", "tags"] where random.next() % 2 == 0 {
                        fields[name] = [FieldValue.string("s\(random.next() % 5)"), .int(Int64(random.next() % 9)),
                                        .stringSet(["x", "y\(random.next() % 2)"]), .null, .double(0.5)][Int(random.next() % 5)]
                    }
                }
                let operation = OperationID.random(using: &random)
                func mutation(_ side: Side) -> Mutation {
                    let stamp: Int64? = switch base {
                    case .current: side.stamps[user]?[key]
                    case .stale: side.stamps[user]?[key].map { $0 - 1 } ?? 17
                    case .none: nil
                    }
                    return Mutation(operationID: operation, kind: key.kind, op: op, recordID: key.id, fields: fields, baseUpdatedAt: stamp,
                                    space: key.space)
                }
                referenceBatch.append(mutation(referenceSide))
                sqliteBatch.append(mutation(sqliteSide))
                sent.append((user, referenceBatch.last!, sqliteBatch.last!))
            }
            let expected = try await reference.push(user: user, referenceBatch)
            let actual = try storage.push(user: user, sqliteBatch)
            #expect(actual.map(\.operationID) == expected.map(\.operationID))
            #expect(actual.map { UnstampedOutcome($0.outcome) } == expected.map { UnstampedOutcome($0.outcome) }, "seed \(seed) step \(step)")
            for result in expected {
                switch result.outcome {
                case .applied(let row): seen.insert(row.isTombstone ? "tombstone" : "applied")
                case .conflict(let row): seen.insert(row == nil ? "conflict-null" : "conflict")
                case .rejected: seen.insert("rejected")
                default: seen.insert("other")
                }
            }
            referenceSide.learn(expected, user: user)
            sqliteSide.learn(actual, user: user)
            if step % 10 == 9 { await reference.tick(1) }
        }
        #expect(seen.isSuperset(of: ["applied", "tombstone", "conflict", "conflict-null", "rejected"]), "the run covers every outcome: \(seen)")
        for user in users {
            // Paged with a small limit on the SQLite side: the same rows, tombstones included.
            var cursors: [String: PullCursor?] = ["pin": nil, "note": nil]
            var rows: [ServerRow] = []
            while true {
                let page = try storage.pull(user: user, PullRequest(cursors: cursors, limit: 3))
                rows += page.rows
                for (kind, cursor) in page.nextCursors { cursors[kind] = cursor }
                if !page.hasMore { break }
            }
            let expected = try await reference.pull(user: user, cursors: ["pin": nil, "note": nil], limit: 1_000).rows
            #expect(Set(rows.map(UnstampedRow.init)) == Set(expected.map(UnstampedRow.init)))
            #expect(rows.count == expected.count)
            for kind in ["pin", "note"] {
                for id in ids {
                    let mine = try storage.read(user: user, kind: kind, id: id).map(UnstampedRow.init)
                    let theirs = await reference.read(user: user, kind: kind, id: id).map(UnstampedRow.init)
                    #expect(mine == theirs)
                }
            }
        }
    }
}
