import Foundation
import SyncJournalPlatform
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync

/// What only PostgreSQL has: several connections (standing in for several
/// `sync-server` processes) on one database, lost connections, its own
/// limits. The shared semantics are in ``StorageSemanticsTests``.
@Suite("PostgreSQL storage", .enabled(if: PostgreSQLTestDatabase.shouldRun, PostgreSQLTestDatabase.skipReason))
struct PostgreSQLStorageTests {
    @Test("the PostgreSQL tests run against a real server (skipped loudly without one, failed when CI requires one)")
    func serverIsThere() throws {
        let connection = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        let rows = try connection.execute("select 41::int8 + $1", [.int64(1)])
        #expect(try rows.int64(0, 0) == 42)
    }

    @Test("a server opening a database already at the current schema takes no lock a running push holds: it starts while a transaction reads operations")
    func openingACurrentDatabaseTakesNoTableLock() throws {
        let schema = try PostgreSQLTestSchema()
        let first = try PostgreSQLStorage(connection: schema.connection, lockTimeoutMilliseconds: 500, clock: { 1_000 })
        _ = try first.push(user: "u1", [Mutations.create("p1")])
        // A push in progress holds a share lock on operations until it commits.
        let busy = try PostgreSQLConnection(connection: schema.connection)
        try busy.execute("begin")
        try busy.execute("select count(*)::int8 from operations")
        defer { _ = try? busy.execute("rollback") }
        // An `alter table` at start-up would wait for that lock, and fail after the 500 ms lock timeout.
        let second = try PostgreSQLStorage(connection: schema.connection, lockTimeoutMilliseconds: 500, clock: { 2_000 })
        let page = try second.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(page.rows.map(\.id) == ["p1"])
    }

    @Test("pushes racing on four connections get unique, per-row increasing stamps, and a puller following cursors meanwhile misses no row")
    func racingPushesAndPuller() throws {
        let schema = try PostgreSQLTestSchema()
        // The database clock, as sync-server uses: several servers, one clock.
        let writers = try (0..<4).map { _ in try PostgreSQLStorage(connection: schema.connection) }
        let reader = try PostgreSQLStorage(connection: schema.connection)
        let finishedWriters = Atomic<Int>(0)
        let applied = Mutex<[Int: [MutationResult]]>([:])
        let problems = Mutex<[String]>([])
        let pulled = Mutex<(seen: [String: ServerRow], pulls: Int)>(([:], 0))
        let pushesPerWriter = 30

        var bodies: [@Sendable () -> Void] = writers.enumerated().map { index, storage in
            { @Sendable in
                defer { finishedWriters.add(1, ordering: .sequentiallyConsistent) }
                var results: [MutationResult] = []
                var moving: Int64?
                for round in 0..<pushesPerWriter {
                    // A row never written again (a missed one stays missed) and one updated every round.
                    let second = moving.map { Mutations.update("w\(index)-moving", base: $0, ["round": .int(Int64(round))]) }
                        ?? Mutations.create("w\(index)-moving", ["round": .int(0)])
                    do {
                        let pushed = try storage.push(user: "u1", [Mutations.create("w\(index)-fixed-\(round)"), second])
                        results += pushed
                        moving = pushed.last?.outcome.appliedRow?.updatedAt
                        if pushed.contains(where: { $0.outcome.appliedRow == nil }) { problems.withLock { $0.append("writer \(index): \(pushed)") } }
                    } catch {
                        problems.withLock { $0.append("writer \(index): \(error)") }
                        return
                    }
                }
                applied.withLock { $0[index] = results }
            }
        }
        bodies.append { @Sendable in
            var cursor: PullCursor?
            while true {
                // Read before the pull: if every writer had finished, this pull's snapshot holds every write.
                let writersDone = finishedWriters.load(ordering: .sequentiallyConsistent) == writers.count
                let page: PullPage
                do {
                    page = try reader.pull(user: "u1", PullRequest(cursors: ["pin": cursor], limit: 5))
                } catch {
                    problems.withLock { $0.append("puller: \(error)") }
                    return
                }
                var previous = cursor
                for row in page.rows {
                    let position = PullCursor(updatedAt: row.updatedAt, id: row.id)
                    if let previous, !(previous < position) { problems.withLock { $0.append("puller: \(position) not after \(previous)") } }
                    previous = position
                }
                pulled.withLock { state in
                    for row in page.rows { state.seen[row.id] = row }
                    state.pulls += 1
                }
                cursor = page.nextCursors["pin"] ?? cursor
                if writersDone && !page.hasMore { return }
            }
        }
        ConcurrentThreads.run(bodies)

        #expect(problems.withLock { $0 } == [])
        let results = applied.withLock { $0 }
        let stamps = results.values.flatMap { $0.compactMap(\.outcome.appliedRow?.updatedAt) }
        #expect(stamps.count == writers.count * pushesPerWriter * 2)
        #expect(Set(stamps).count == stamps.count, "every stamp is issued once, across connections")
        for (index, writerResults) in results {
            let own = writerResults.compactMap(\.outcome.appliedRow?.updatedAt)
            #expect(own == own.sorted() && Set(own).count == own.count, "writer \(index)'s stamps increase")
        }
        // Everything in the database, read afresh, is exactly what the puller ended with.
        let everything = try reader.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10_000))
        #expect(everything.rows.count == writers.count * (pushesPerWriter + 1))
        let (seen, pulls) = pulled.withLock { $0 }
        #expect(seen == Dictionary(uniqueKeysWithValues: everything.rows.map { ($0.id, $0) }), "after \(pulls) pulls")
    }

    @Test("negative control: a stamp taken outside the pushing transaction's lock lets a puller following cursors miss a row")
    func stampOutsideTheLockMissesRows() throws {
        // Why the stamp lock is held until commit: here a broken writer takes its
        // stamp in one transaction and writes its row in a later one.
        let schema = try PostgreSQLTestSchema()
        let storage = try PostgreSQLStorage(connection: schema.connection)
        let broken = try PostgreSQLConnection(connection: schema.connection)
        let early = try broken.execute("""
            insert into user_stamps (owner, last) values ('u1', 1) on conflict (owner) do update set last = user_stamps.last + 1 returning last
            """).int64(0, 0)
        let pushed = try #require(try storage.push(user: "u1", [Mutations.create("ok")]).first?.outcome.appliedRow)
        #expect(pushed.updatedAt > early)
        let first = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(first.rows == [pushed])
        try broken.execute("""
            insert into rows (kind, id, owner, fields, updated_at, deleted_at)
            select kind, 'late', owner, fields, $1, null from rows where id = 'ok'
            """, [.int64(early)])
        let next = try storage.pull(user: "u1", PullRequest(cursors: ["pin": first.nextCursors["pin"]], limit: 10))
        #expect(next.rows.isEmpty, "the late row sorts before the cursor: missed")
        let everything = try storage.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(everything.rows.map(\.id) == ["late", "ok"], "yet it is in the database")
    }

    @Test("two servers racing the same resend both answer the first result, and it is applied once")
    func racingResends() throws {
        let schema = try PostgreSQLTestSchema()
        let first = try PostgreSQLStorage(connection: schema.connection)
        let second = try PostgreSQLStorage(connection: schema.connection)
        for round in 0..<15 {
            let mutation = Mutations.create("r\(round)", ["round": .int(Int64(round))])
            let answers = Mutex<[Result<[MutationResult], StorageError>]>([])
            ConcurrentThreads.run([first, second].map { storage in
                { @Sendable in
                    let answer: Result<[MutationResult], StorageError>
                    do throws(StorageError) { answer = .success(try storage.push(user: "u1", [mutation])) } catch { answer = .failure(error) }
                    answers.withLock { $0.append(answer) }
                }
            })
            let both = try answers.withLock { $0 }.map { try $0.get() }
            #expect(both.count == 2 && both[0] == both[1], "round \(round)")
            #expect(both.first?.first?.outcome.appliedRow != nil)
        }
        let page = try first.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 100))
        #expect(page.rows.count == 15)
        let remembered = try PostgreSQLConnection(connection: schema.connection).execute("select count(*)::int8 from operations")
        #expect(try remembered.int64(0, 0) == 15)
    }

    @Test("a lost connection is replaced: the next call retries on a new one; without retries it is 503 unavailable with the SQLSTATE, no password")
    func lostConnection() throws {
        let schema = try PostgreSQLTestSchema()
        let application = "syncjournal-test-\(UUID().uuidString.prefix(8).lowercased())"
        let connection = schema.connection(adding: "application_name", application) + " password=never-shown"
        let storage = try PostgreSQLStorage(connection: connection)
        let once = try PostgreSQLStorage(connection: connection, maximumAttempts: 1)
        _ = try storage.push(user: "u1", [Mutations.create("p1")])
        _ = try once.push(user: "u1", [Mutations.create("p2")])
        // The server ends every connection of this test (pg_terminate_backend waits until each is gone).
        let admin = try PostgreSQLConnection(connection: try PostgreSQLTestDatabase.connection())
        // Materialized first: in one WHERE, PostgreSQL may call pg_terminate_backend before the name test.
        let ended = try admin.execute("""
            with targets as materialized (select pid from pg_stat_activity where application_name = $1)
            select count(*)::int8 from targets where pg_terminate_backend(pid, 10000)
            """, [.text(application)])
        #expect(try ended.int64(0, 0) >= 2)
        #expect(try storage.push(user: "u1", [Mutations.create("p3")]).first?.outcome.appliedRow != nil)
        do {
            _ = try once.push(user: "u1", [Mutations.create("p4")])
            Issue.record("a push on a terminated connection without retries succeeded")
        } catch {
            guard case .unavailable(let reason) = error else {
                Issue.record("expected unavailable, got \(error)")
                return
            }
            #expect(!reason.contains("never-shown"), "\(reason)")
            #expect(reason.contains("application_name=\(application)"), "\(reason)")
        }
        #expect(try once.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows.map(\.id) == ["p1", "p2", "p3"])
    }

    @Test("a push waits for the push of its user holding that user's stamp lock and is stamped after it; past lock_timeout it is 503 unavailable, not a hang")
    func stampLockOrdersPushes() throws {
        let schema = try PostgreSQLTestSchema()
        let application = "syncjournal-test-\(UUID().uuidString.prefix(8).lowercased())"
        let storage = try PostgreSQLStorage(connection: schema.connection(adding: "application_name", application))
        let impatient = try PostgreSQLStorage(connection: schema.connection, lockTimeoutMilliseconds: 100, maximumAttempts: 1)
        _ = try storage.push(user: "u1", [Mutations.create("first")])
        // A push of u1 in flight on another server: it holds u1's stamp row and has taken a stamp, not yet committed.
        let inFlight = try PostgreSQLConnection(connection: schema.connection)
        try inFlight.execute("begin")
        let held = try inFlight.execute("update user_stamps set last = last + 1000 where owner = 'u1' returning last").int64(0, 0)
        do {
            _ = try impatient.push(user: "u1", [Mutations.create("impatient")])
            Issue.record("a push ran while another held the stamp lock")
        } catch {
            guard case .unavailable(let reason) = error else {
                Issue.record("expected unavailable, got \(error)")
                return
            }
            #expect(reason.contains("55P03"), "\(reason)")
        }
        let waiting = Mutex<(done: Bool, result: MutationResult?)>((false, nil))
        let observer = try PostgreSQLConnection(connection: schema.connection)
        ConcurrentThreads.run([
            { @Sendable in
                let result = (try? storage.push(user: "u1", [Mutations.create("waiting")]))?.first
                waiting.withLock { $0 = (true, result) }
            },
            { @Sendable in
                // Commit only once the other push is seen waiting for a lock (pg_locks, not a timer),
                // or has ended (then the expectations below say why).
                while !waiting.withLock({ $0.done }), (try? observer.execute("""
                    select count(*)::int8 from pg_locks l join pg_stat_activity a on a.pid = l.pid
                    where not l.granted and a.application_name = $1
                    """, [.text(application)]).int64(0, 0)) == 0 {}
                _ = try? inFlight.execute("commit")
            },
        ])
        let stamp = try #require(waiting.withLock { $0.result }?.outcome.appliedRow?.updatedAt)
        #expect(stamp > held, "stamped after the push that held the lock committed")
    }

    @Test("servers starting at once on an empty database all create the tables without tripping over each other")
    func racingMigrations() throws {
        let schema = try PostgreSQLTestSchema()
        let failures = Mutex<[StorageError]>([])
        ConcurrentThreads.run((0..<4).map { _ in
            { @Sendable in
                do throws(StorageError) { _ = try PostgreSQLStorage(connection: schema.connection) } catch { failures.withLock { $0.append(error) } }
            }
        })
        #expect(failures.withLock { $0 } == [])
    }

    @Test("a kind or record id holding U+0000 is rejected permanently (PostgreSQL text cannot hold it), never a 500")
    func nulInIds() throws {
        let schema = try PostgreSQLTestSchema()
        let storage = try PostgreSQLStorage(connection: schema.connection)
        let results = try storage.push(user: "u1", [Mutations.create("a\u{0}b"), Mutations.create("p1", kind: "p\u{0}n")])
        #expect(results.allSatisfy { if case .rejected(_, true) = $0.outcome { true } else { false } })
        #expect(try storage.read(user: "u1", kind: "pin", id: "a\u{0}b") == nil)
        #expect(throws: StorageError.self) {
            try storage.pull(user: "u1", PullRequest(cursors: ["pin": PullCursor(updatedAt: 1, id: "\u{0}")], limit: 10))
        }
    }
}
