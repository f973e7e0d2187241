import Foundation
import SyncJournalPlatform
import SyncJournalTestSupport
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync

/// Stamps counted and locked per user: pushes of different users run at
/// once, while a cursor following one user still never misses a row, and a
/// database of the schema with one stamp row for everyone opens and keeps
/// its stamps.
@Suite("PostgreSQL per-user stamps", .enabled(if: PostgreSQLTestDatabase.shouldRun, PostgreSQLTestDatabase.skipReason))
struct PostgreSQLUserStampTests {
    @Test("four users push on two servers at once; a follower of each user on the other server sees every row version exactly once, in order")
    func followersOfSeveralUsers() throws {
        let schema = try PostgreSQLTestSchema()
        // Two servers on one database: two storages, each with its own connections, the database clock.
        let servers = try (0..<2).map { _ in try PostgreSQLStorage(connection: schema.connection) }
        let users = (0..<4).map { "u\($0)" }
        let writersPerUser = 2
        let pushesPerWriter = 20
        let finishedWriters = Atomic<Int>(0)
        let problems = Mutex<[String]>([])
        let followed = Mutex<[String: [PullCursor]]>([:])

        var bodies: [@Sendable () -> Void] = []
        for (userIndex, user) in users.enumerated() {
            for writer in 0..<writersPerUser {
                let storage = servers[(userIndex + writer) % servers.count]
                bodies.append { @Sendable in
                    defer { finishedWriters.add(1, ordering: .sequentiallyConsistent) }
                    var moving: Int64?
                    for round in 0..<pushesPerWriter {
                        // A row never written again (a missed one stays missed) and one updated every round;
                        // ids name the user: a record id is one record across users.
                        let second = moving.map { Mutations.update("\(user)-w\(writer)-moving", base: $0, ["round": .int(Int64(round))]) }
                            ?? Mutations.create("\(user)-w\(writer)-moving", ["round": .int(0)])
                        do {
                            let pushed = try storage.push(user: user, [Mutations.create("\(user)-w\(writer)-fixed-\(round)"), second])
                            moving = pushed.last?.outcome.appliedRow?.updatedAt
                            if pushed.contains(where: { $0.outcome.appliedRow == nil }) {
                                problems.withLock { $0.append("\(user) writer \(writer): \(pushed)") }
                            }
                        } catch {
                            problems.withLock { $0.append("\(user) writer \(writer): \(error)") }
                            return
                        }
                    }
                }
            }
            // The follower reads through the server its user's first writer does not use.
            let reader = servers[(userIndex + 1) % servers.count]
            bodies.append { @Sendable in
                var cursor: PullCursor?
                var seen: [PullCursor] = []
                while true {
                    // Read before the pull: if every writer had finished, this pull's snapshot holds every write.
                    let writersDone = finishedWriters.load(ordering: .sequentiallyConsistent) == users.count * writersPerUser
                    let page: PullPage
                    do {
                        page = try reader.pull(user: user, PullRequest(cursors: ["pin": cursor], limit: 7))
                    } catch {
                        problems.withLock { $0.append("\(user) follower: \(error)") }
                        return
                    }
                    seen += page.rows.map { PullCursor(updatedAt: $0.updatedAt, id: $0.id) }
                    cursor = page.nextCursors["pin"] ?? cursor
                    if writersDone && !page.hasMore { break }
                }
                followed.withLock { $0[user] = seen }
            }
        }
        ConcurrentThreads.run(bodies)

        #expect(problems.withLock { $0 } == [])
        let seenByUser = followed.withLock { $0 }
        for user in users {
            let seen = try #require(seenByUser[user], "\(user) was followed")
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "\(user): strictly increasing positions, so no row twice")
            // Every version written: the fixed rows once, the moving row once per round. A follower that missed a
            // version (an update taken over by a later one) would hold fewer; the latest of each row is the table.
            let everything = try servers[0].pull(user: user, PullRequest(cursors: ["pin": nil], limit: 10_000))
            #expect(everything.rows.count == writersPerUser * (pushesPerWriter + 1))
            let latest = Dictionary(seen.map { ($0.id, $0) }, uniquingKeysWith: { max($0.updatedAt, $1.updatedAt) == $0.updatedAt ? $0 : $1 })
            #expect(latest == Dictionary(uniqueKeysWithValues: everything.rows.map { ($0.id, PullCursor(updatedAt: $0.updatedAt, id: $0.id)) }),
                    "\(user): the follower ends with exactly the user's rows")
            #expect(seen.filter { !$0.id.hasSuffix("moving") }.count == writersPerUser * pushesPerWriter,
                    "\(user): every row never written again was seen exactly once")
        }
    }

    @Test("a push waits only for pushes of its own user: while one user's stamp lock is held another user's push goes through")
    func otherUsersDoNotWait() throws {
        let schema = try PostgreSQLTestSchema()
        let impatient = try PostgreSQLStorage(connection: schema.connection, lockTimeoutMilliseconds: 100, maximumAttempts: 1)
        _ = try impatient.push(user: "u1", [Mutations.create("first")])
        let inFlight = try PostgreSQLConnection(connection: schema.connection)
        try inFlight.execute("begin")
        let held = try inFlight.execute("update user_stamps set last = last + 1000 where owner = 'u1' returning last").int64(0, 0)
        let other = try impatient.push(user: "u2", [Mutations.create("other")])
        #expect(other.first?.outcome.appliedRow != nil, "u2 does not wait for u1's lock")
        do {
            _ = try impatient.push(user: "u1", [Mutations.create("blocked")])
            Issue.record("a push of u1 ran while another held u1's stamp lock")
        } catch {
            guard case .unavailable(let reason) = error else {
                Issue.record("expected unavailable, got \(error)")
                return
            }
            #expect(reason.contains("55P03"), "\(reason)")
        }
        try inFlight.execute("commit")
        let after = try #require(try impatient.push(user: "u1", [Mutations.create("after")]).first?.outcome.appliedRow)
        #expect(after.updatedAt > held, "u1's next stamp is above what the committed push took")
    }

    @Test("two users creating the same kind and id at once on two servers each make their own record, neither overwriting the other's")
    func racingCreatesOfOneRecord() throws {
        let schema = try PostgreSQLTestSchema()
        let servers = try (0..<2).map { _ in try PostgreSQLStorage(connection: schema.connection) }
        for round in 0..<15 {
            let answers = Mutex<[String: MutationOutcome]>([:])
            let problems = Mutex<[String]>([])
            ConcurrentThreads.run([("a", servers[0]), ("b", servers[1])].map { user, storage in
                { @Sendable in
                    do throws(StorageError) {
                        let outcome = try storage.push(user: user, [Mutations.create("r\(round)", ["by": .string(user)])]).first?.outcome
                        answers.withLock { $0[user] = outcome }
                    } catch {
                        problems.withLock { $0.append("\(user): \(error)") }
                    }
                }
            })
            #expect(problems.withLock { $0 } == [], "round \(round)")
            let outcomes = answers.withLock { $0 }
            #expect(outcomes.values.allSatisfy { $0.appliedRow != nil }, "round \(round): \(outcomes)")
            for user in ["a", "b"] {
                let stored = try servers[0].read(user: user, kind: "pin", id: "r\(round)")
                #expect(stored?.fields == ["by": .string(user)], "round \(round)")
            }
        }
    }

    @Test("a database of schema version 1 opens at the current version: stored stamps stay, each user's next stamp is above every old one, old horizons still expire cursors")
    func migratesVersionOne() throws {
        let schema = try PostgreSQLTestSchema()
        // The clock far behind every stored stamp: only the counters keep the order.
        let clock = FixedClock()
        clock.set(1)
        _ = try PostgreSQLStorage(connection: schema.connection, clock: clock.reading).push(user: "u1", [Mutations.create("kept")])
        // Back to version 1's shape: no per-user tables, one shared stamp row (here at 9000), a per-kind horizon.
        let old = try PostgreSQLConnection(connection: schema.connection)
        for statement in [
            "drop table user_stamps", "drop table user_horizons", "update storage_schema set version = 1",
            "update stamp set last = 9000", "update rows set updated_at = 8500 where id = 'kept'",
            "insert into horizons (kind, updated_at, id) values ('pin', 8000, 'gone')",
        ] { try old.execute(statement) }

        let storage = try PostgreSQLStorage(connection: schema.connection, clock: clock.reading)
        #expect(try old.execute("select version from storage_schema").int64(0, 0) == PostgreSQLSchema.version)
        let before = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(before.rows.map(\.id) == ["kept"] && before.rows.first?.updatedAt == 8500, "stored stamps stay")
        for user in ["u1", "u2"] {
            let stamp = try #require(try storage.push(user: user, [Mutations.create("new-\(user)")]).first?.outcome.appliedRow?.updatedAt)
            #expect(stamp > 9000, "\(user)'s first stamp is above every stamp the shared counter issued")
        }
        #expect(throws: StorageError.cursorExpired(kinds: ["pin"])) {
            try storage.pull(user: "u2", PullRequest(cursors: ["pin": PullCursor(updatedAt: 7000, id: "x")], limit: 10))
        }
        // A server of a later version's database refuses to open it.
        try old.execute("update storage_schema set version = \(PostgreSQLSchema.version + 1)")
        #expect(throws: StorageError.self) { try PostgreSQLStorage(connection: schema.connection) }
    }

    @Test("a purge keeps horizons per user: another user's cursor below a purged tombstone is not expired")
    func horizonsPerUser() throws {
        let schema = try PostgreSQLTestSchema()
        let storage = try PostgreSQLStorage(connection: schema.connection)
        let early = try #require(try storage.push(user: "u2", [Mutations.create("early")]).first?.outcome.appliedRow)
        let a = try #require(try storage.push(user: "u1", [Mutations.create("a")]).first?.outcome.appliedRow)
        let tombstone = try #require(try storage.push(user: "u1", [Mutations.delete("a", base: a.updatedAt)]).first?.outcome.appliedRow)
        #expect(try storage.purgeTombstones(olderThan: tombstone.updatedAt + 1) == 1)
        #expect(throws: StorageError.cursorExpired(kinds: ["pin"])) {
            try storage.pull(user: "u1", PullRequest(cursors: ["pin": PullCursor(updatedAt: a.updatedAt, id: "a")], limit: 10))
        }
        let other = try storage.pull(user: "u2", PullRequest(cursors: ["pin": PullCursor(updatedAt: early.updatedAt - 1, id: "early")], limit: 10))
        #expect(other.rows == [early], "u2 lost nothing, so u2's cursor is not expired")
    }

    @Test("two editors push into one space at once on two servers: the space's stamps follow its commits, and a follower pulling meanwhile sees every row once")
    func racingPushesIntoOneSpace() throws {
        let schema = try PostgreSQLTestSchema()
        let servers = try (0..<2).map { _ in try PostgreSQLStorage(connection: schema.connection) }
        let trip = SpaceID("2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b")!
        try servers[0].change(user: "dad", .create(trip, name: "Trip"))
        for editor in ["a", "b"] { try servers[0].change(user: "dad", .setMember(trip, user: editor, role: .editor)) }
        let problems = Mutex<[String]>([])
        let seen = Mutex<[String]>([])
        let done = Mutex(0)
        var writers: [@Sendable () -> Void] = [("a", servers[0]), ("b", servers[1])].map { user, storage in
            { @Sendable in
                for index in 0..<40 {
                    do throws(StorageError) {
                        let outcome = try storage.push(user: user, [Mutations.create("\(user)\(index)", space: trip)]).first?.outcome
                        if outcome?.appliedRow == nil { problems.withLock { $0.append("\(user)\(index): \(String(describing: outcome))") } }
                    } catch {
                        problems.withLock { $0.append("\(user): \(error)") }
                    }
                }
                done.withLock { $0 += 1 }
            }
        }
        writers.append { @Sendable in
            var held: [SpaceID: SpaceCursors] = [:]
            while true {
                let finished = done.withLock { $0 } == 2
                do throws(StorageError) {
                    let page = try servers[1].pull(user: "dad", PullRequest(cursors: ["pin": nil], limit: 500, spaces: held))
                    seen.withLock { $0 += page.rows.map(\.id) }
                    for space in page.spaces { held[space.id, default: SpaceCursors(version: nil, cursors: [:])].version = space.version }
                    for (space, cursors) in page.nextSpaceCursors {
                        for (kind, cursor) in cursors { held[space, default: SpaceCursors(version: nil, cursors: [:])].cursors[kind] = cursor }
                    }
                } catch {
                    problems.withLock { $0.append("follower: \(error)") }
                    return
                }
                if finished { return }
            }
        }
        ConcurrentThreads.run(writers)
        #expect(problems.withLock { $0 } == [])
        let rows = try servers[0].pull(user: "dad", PullRequest(cursors: ["pin": nil], limit: 500, spaces: [:])).rows
        #expect(rows.count == 80 && Set(rows.map(\.updatedAt)).count == 80, "every write of the space has a stamp of its own")
        let followed = seen.withLock { $0 }
        #expect(followed.count == 80 && Set(followed).count == 80, "the follower saw every row exactly once")
    }
}
