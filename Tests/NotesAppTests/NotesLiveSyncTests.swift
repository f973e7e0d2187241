import Foundation
@testable import NotesApp
import SyncJournal
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// `notes watch` and `notes status` in-process, against the reference server
/// (which answers waits for changes) on a virtual clock that nothing advances
/// unless the test does.
@Suite("notes: watch follows the engine live, status reports it", .timeLimit(.minutes(5)))
struct NotesLiveSyncTests {
    /// A running watch: its output, and the stream that stops it.
    private struct RunningWatch {
        let captured = CapturedOutput()
        let task: Task<Void, any Error>
        let stop: AsyncStream<Void>.Continuation

        init(_ repository: NotesRepository, engine: SyncEngine, json: Bool) {
            let (stops, stop) = AsyncStream<Void>.makeStream()
            let watch = NotesWatch(repository: repository, engine: engine, server: "reference", json: json, output: captured.output)
            self.stop = stop
            task = Task { try await watch.run(until: stops) }
        }

        /// Asks the watch to stop and waits until it has.
        func end() async throws {
            stop.yield()
            try await task.value
        }
    }

    @Test("device B's watch prints the note device A adds as soon as the server announces it, with B editing nothing and no timer firing")
    func watchSeesAnotherDevice() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-live"); defer { scratch.remove() }
        let server = ReferenceServer()
        let deviceA = try await NotesRepository.open(directory: scratch.file("a"))
        let deviceB = try await NotesRepository.open(directory: scratch.file("b"))
        let clockB = ManualClock()
        let engineB = deviceB.engine(transport: server.transport(user: "u1"), changeWaitTimeout: .seconds(60), clock: clockB)
        let watch = RunningWatch(deviceB, engine: engineB, json: true)
        await watch.captured.waitForStandard(containing: "[]\n")

        let id = try await deviceA.add(text: "water the plants")
        let pushed = await deviceA.engine(transport: server.transport(user: "u1")).sync()
        #expect(pushed == .ok(pushed: 1, pulled: 1, conflicts: 0))
        await watch.captured.waitForStandard(containing: id)
        try await watch.end()

        #expect(watch.captured.standard == "[]\n[{\"id\":\"\(id)\",\"text\":\"water the plants\",\"pinned\":false}]\n")
        #expect(watch.captured.error.isEmpty)
        #expect(try await deviceB.store.outboxStatus().isEmpty, "B made no edit")
        #expect(clockB.firedTimers == 0, "B pulled because the server announced the note, not on a timer")
        #expect(await !engineB.isWaitingForChanges, "stopping the watch closed the wait")
        await deviceA.close()
        await deviceB.close()
    }

    @Test("watch prints one line on standard error when the server stops answering, and one when a sync succeeds again")
    func watchReportsUnreachableAndRecovery() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-live"); defer { scratch.remove() }
        let server = ReferenceServer()
        let faulty = FaultInjectingTransport(server.transport(user: "u1"))
        await faulty.inject(.serverUnreachable(reason: "connection refused"), on: .pull)
        let device = try await NotesRepository.open(directory: scratch.file("b"))
        let clock = ManualClock()
        let engine = device.engine(transport: faulty, idlePullInterval: .seconds(5), clock: clock)
        let watch = RunningWatch(device, engine: engine, json: false)
        await watch.captured.waitForStandard(containing: "(no notes)\n")

        await clock.advance(by: .zero)   // the pull due at start: nothing answers
        await watch.captured.waitForError(containing: "cannot reach")
        #expect(watch.captured.error == "notes: cannot reach the server at reference: server unreachable: connection refused; retrying, changes stay queued in the journal\n")

        let other = await server.write(user: "u1", kind: "note", id: "n1", fields: ["text": .string("from A"), "created": .int(1)])
        #expect(other.id == "n1")
        let retry = try #require(clock.nextDeadlineMilliseconds, "a retry is scheduled")
        await clock.advance(toMilliseconds: retry)
        await watch.captured.waitForError(containing: "again")
        await watch.captured.waitForStandard(containing: "n1  from A\n")
        try await watch.end()
        #expect(watch.captured.error.hasSuffix("\nnotes: in sync with reference again\n"))
        #expect(watch.captured.standard == "(no notes)\n\nn1  from A\n\n")
        await device.close()
    }

    @Test("watch says so when the server refuses the token, once")
    func watchReportsRefusedToken() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-live"); defer { scratch.remove() }
        let faulty = FaultInjectingTransport(ReferenceServer().transport(user: "u1"))
        await faulty.inject(.unauthorized(reason: "HTTP 401"), on: .changeWait)
        let device = try await NotesRepository.open(directory: scratch.file("b"))
        let engine = device.engine(transport: faulty, changeWaitTimeout: .seconds(60), clock: ManualClock())
        let watch = RunningWatch(device, engine: engine, json: false)
        await watch.captured.waitForError(containing: "refused the token")
        #expect(await engine.isWaitingForAuthentication)
        try await watch.end()
        #expect(watch.captured.error == "notes: the server at reference refused the token (HTTP 401); syncing is paused until notes runs with a token it accepts\n")
        await device.close()
    }

    @Test("status after a sync the server did not answer: not reachable, the edit pending, no successful sync in this run")
    func statusUnreachable() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-live"); defer { scratch.remove() }
        let faulty = FaultInjectingTransport(ReferenceServer().transport(user: "u1"))
        await faulty.inject(.serverUnreachable(reason: "connection refused"), on: .push)
        let device = try await NotesRepository.open(directory: scratch.file("a"))
        _ = try await device.add(text: "buy milk")
        let clock = ManualClock(wallTimeAtStart: Date(timeIntervalSince1970: 1_800_000_000))
        let report = await NotesStatusReport.afterOneSync(of: device.engine(transport: faulty, clock: clock), server: URL(string: "http://h:1")!)
        #expect(report.text() == """
            server: http://h:1
            reachable: no
            connectivity: server unreachable: connection refused
            activity: idle
            pending: 1
            quarantined: 0
            conflicts: 0
            this sync: retry later: server unreachable: connection refused
            last successful sync: none in this run

            """)
        #expect(report.json() == #"{"server":"http://h:1","reachable":false,"connectivity":"server unreachable","reason":"server unreachable: connection refused","activity":"idle","pending":1,"quarantined":0,"conflicts":0,"thisSync":"retry later: server unreachable: connection refused","lastSuccessfulSync":null}"#)
        await device.close()
    }

    @Test("status after a good sync: reachable, nothing pending, the conflict counted, and the sync's time on the wall clock")
    func statusAfterGoodSync() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-live"); defer { scratch.remove() }
        let server = ReferenceServer()
        let device = try await NotesRepository.open(directory: scratch.file("a"))
        let id = try await device.add(text: "buy milk")
        let clock = ManualClock(wallTimeAtStart: Date(timeIntervalSince1970: 1_800_000_000))
        let engine = device.engine(transport: server.transport(user: "u1"), clock: clock)
        #expect(await engine.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        // Another device's text reaches the server first: this device's edit conflicts.
        await server.tick(1)
        _ = await server.update(kind: "note", id: id, changes: ["text": .string("buy soy milk")])
        try await device.edit(id: id, text: "buy rice milk")

        let report = await NotesStatusReport.afterOneSync(of: engine, server: URL(string: "http://h:1")!)
        #expect(report.serverAnswered)
        #expect(report.status.conflicts == 1)
        #expect(report.text() == """
            server: http://h:1
            reachable: yes
            connectivity: online
            activity: idle
            pending: 0
            quarantined: 0
            conflicts: 1
            this sync: ok (pushed 0, pulled 1, conflicts 1)
            last successful sync: 2027-01-15T08:00:00Z

            """)
        await device.close()
    }

    @Test("notes status with no server listening prints the status, reachable no, and exits 0")
    func statusCommandWithoutServer() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-live"); defer { scratch.remove() }
        let captured = CapturedOutput()
        let status = await NotesCommand.run(arguments: ["status", "--json", "--dir", scratch.file("a"), "--server", "http://127.0.0.1:1"],
                                            output: captured.output, stopRequests: { AsyncStream { $0.finish() } })
        #expect(status == 0, "\(captured.error)")
        #expect(captured.error.isEmpty)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(captured.standard.utf8)) as? [String: Any], "\(captured.standard)")
        #expect(object["reachable"] as? Bool == false)
        #expect(object["pending"] as? Int == 0)
        #expect(object["lastSuccessfulSync"] is NSNull)
    }
}
