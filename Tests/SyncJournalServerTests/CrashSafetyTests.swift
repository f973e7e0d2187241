import Foundation
import SyncJournalPlatform
import SyncJournalTestSupport
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalWire
import SyncJournalTesting

@Suite("sync-server binary: crash safety and command line")
struct CrashSafetyTests {
    @Test("after SIGKILL mid-stream, every acknowledged push is there, each unacknowledged one is all or nothing, and a resend gets the remembered result",
          arguments: StorageBackend.tested)
    func killAndRestart(_ backend: StorageBackend) throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-server"); defer { directory.remove() }
        let database = directory.file("crash.sqlite")
        let schema = backend == .postgres ? try PostgreSQLTestSchema() : nil
        let storageArguments = schema.map { ["--postgres", $0.connection] } ?? ["--db", database]
        let arguments = ["--port", "0"] + storageArguments + ["--user", "t-alice:alice"]
        let first = try RunningSyncServer(arguments)
        let storage = schema.map { "postgres \(PostgreSQLConnection.redact($0.connection))" } ?? "sqlite \(database)"
        #expect(first.readyLine == "sync-server listening on http://127.0.0.1:\(first.port) (\(storage))")
        let batches = (0..<30).map { batch in
            (0..<3).map { Mutations.create("r\(batch)-\($0)", ["n": .int(Int64(batch)), "payload": .string(String(repeating: "x", count: 200))]) }
        }
        // Twenty batches one by one, each acknowledged before the next.
        var acknowledged: [(body: [UInt8], reply: [UInt8], results: [MutationResult])] = []
        for batch in batches[0..<20] {
            let client = try RawClient(port: first.port)
            let body = PushRequestCodec.encode(batch)
            try client.send(SyncServerFixture.post("/v1/sync/push", body: body, token: "t-alice"))
            let response = try client.readResponse()
            #expect(response.status == 200)
            acknowledged.append((body, response.body, try PushReplyCodec.decode(response.body, answering: batch)))
        }
        // Ten more pipelined on one connection; two answers read, then the server is killed.
        let pipelined = try RawClient(port: first.port)
        try pipelined.send(batches[20..<30].flatMap { SyncServerFixture.post("/v1/sync/push", body: PushRequestCodec.encode($0), token: "t-alice") })
        for batch in batches[20..<22] {
            let response = try pipelined.readResponse()
            #expect(response.status == 200)
            acknowledged.append((PushRequestCodec.encode(batch), response.body, try PushReplyCodec.decode(response.body, answering: batch)))
        }
        first.stop(.kill)

        let second = try RunningSyncServer(arguments)
        let pull = PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 10_000))
        let client = try RawClient(port: second.port)
        try client.send(SyncServerFixture.post("/v1/sync/pull", body: pull, token: "t-alice"))
        let rows = try PullPageCodec.decode(try client.readResponse().body).rows
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
        for entry in acknowledged {
            for result in entry.results {
                let row = try #require(result.outcome.appliedRow)
                #expect(byID[row.id] == row, "acknowledged \(row.id) survived with its stamp and fields")
            }
        }
        for batch in batches[22..<30] {
            let present = batch.filter { byID[$0.recordID] != nil }.count
            #expect(present == 0 || present == batch.count, "a push is applied whole or not at all")
        }
        // A resend of acknowledged pushes gets the remembered, byte-identical reply.
        for entry in [acknowledged[0], acknowledged[acknowledged.count - 1]] {
            try client.send(SyncServerFixture.post("/v1/sync/push", body: entry.body, token: "t-alice"))
            let again = try client.readResponse()
            #expect(again.status == 200 && again.body == entry.reply)
        }
        // Stamps keep increasing across the restart.
        let highest = rows.map(\.updatedAt).max() ?? 0
        try client.send(SyncServerFixture.post("/v1/sync/push", body: PushRequestCodec.encode([Mutations.create("later")]), token: "t-alice"))
        let later = try PushReplyCodec.decode(try client.readResponse().body)
        #expect((later.first?.outcome.appliedRow?.updatedAt ?? 0) > highest)
        #expect(second.stop(.terminate) == 0, "SIGTERM stops it cleanly")
    }

    @Test("bad arguments exit 64, an unreadable users file 66, a port in use 69, --help 0")
    func commandLine() throws {
        func run(_ arguments: [String]) throws -> Int32 {
            let process = ChildProcess()
            process.executableURL = BuiltTool.url(of: "sync-server")
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        let directory = try TemporaryDirectory(prefix: "syncjournal-server"); defer { directory.remove() }
        #expect(try run(["--help"]) == 0)
        #expect(try run(["--bogus"]) == 64)
        #expect(try run(["--port", "70000"]) == 64)
        #expect(try run(["--port"]) == 64)
        #expect(try run(["--user", "no-colon"]) == 64)
        #expect(try run(["--max-batch", "0"]) == 64)
        #expect(try run(["--tombstone-retention-days", "0"]) == 64)
        #expect(try run(["--users", directory.file("missing.txt")]) == 66)
        let running = try RunningSyncServer(["--port", "0", "--db", directory.file("a.sqlite")])
        #expect(try run(["--port", String(running.port), "--db", directory.file("b.sqlite")]) == 69)
        #expect(try run(["--port", "0", "--db", directory.file("no/such/dir/c.sqlite")]) == 73)
        #expect(running.stop(.interrupt) == 0, "SIGINT stops it cleanly too")
    }

    @Test("the command line reads a users file with comments, and --user adds to it")
    func usersFile() throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-server"); defer { directory.remove() }
        let path = directory.file("users.txt")
        try "# tokens\n\nt-alice alice\n  t-bob\tbob  \n".write(toFile: path, atomically: true, encoding: .utf8)
        guard case .run(let options) = try SyncServerCommandLine.parse(["--users", path, "--user", "t-carol:carol", "--port", "0",
                                                                                "--tombstone-retention-days", "30", "--max-batch", "50", "--max-body", "4096"]) else {
            Issue.record("expected options")
            return
        }
        #expect(options.users.user(forToken: "t-alice") == "alice")
        #expect(options.users.user(forToken: "t-bob") == "bob")
        #expect(options.users.user(forToken: "t-carol") == "carol")
        #expect(options.users.user(forToken: "t-caro") == nil)
        #expect(options.port == 0 && options.maximumBatchSize == 50 && options.maximumBodyBytes == 4_096)
        #expect(options.tombstoneRetentionMilliseconds == Int64(30) * 86_400_000)
        try "t-alice alice extra\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: SyncServerError.self) { try SyncServerCommandLine.parse(["--users", path]) }
    }
}
