import Foundation
import JournalCrashTool
import SyncJournal
import SyncJournalPlatform
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

// A widget or an extension reads the journal while the app, another
// process, holds it for writing: the file lock keeps a second writer out,
// and a read-only store needs no lock at all.

@Suite("Read-only opening across processes")
struct ReadOnlyAcrossProcessesTests {
    @Test("a journal another process is writing opens read-only; a writer is refused; after a kill the read-only store sees every acknowledged edit and leaves the file as it was")
    func readsWhileAnotherProcessWrites() async throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-read-only"); defer { directory.remove() }
        let path = directory.file("store.journal")
        let process = ChildProcess()
        process.executableURL = BuiltTool.url(of: "journal-crash")
        process.arguments = ["store", path, "--seed", "77", "--edits", "100000000"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = Data()
        var acks = 0
        // The reads follow the writer's own output, not a timer.
        while acks < 100 {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            acks += String(decoding: chunk, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("acked ") }.count
            text.append(chunk)
        }
        #expect(acks >= 100, "the writer stopped early")

        // While the other process writes: a second writer is refused by the file lock ...
        var refusal: StoreError?
        do { _ = try await LocalStore.open(path: path) } catch { refusal = error }
        if case .cannotOpen(_, .locked)? = refusal {} else { Issue.record("a second writer was not refused: \(String(describing: refusal))") }
        // ... and a read-only store opens and reads.
        var options = LocalStore.Options()
        options.readOnly = true
        let reader = try await LocalStore.open(path: path, options: options)
        #expect(await reader.status == .ready)
        #expect(try await reader.records(StoreCrash.kind).count > 0)
        try await reader.close()

        try? SystemProcess.send(.kill, to: process.processIdentifier)
        process.waitUntilExit()
        text.append(out.fileHandleForReading.readDataToEndOfFile())
        var log = String(decoding: text, as: UTF8.self)
        if let end = log.lastIndex(of: "\n") { log = String(log[...end]) } else { log = "" }

        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        let readOnly = try await StoreCrash.verify(path: path, log: log, readOnly: true)
        #expect(readOnly.passed, "\(readOnly.lost + readOnly.torn)")
        #expect(readOnly.editsAcknowledged >= 100)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the read-only check changed nothing")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == names)
        // A writer then repairs what the kill left and agrees.
        let writable = try await StoreCrash.verify(path: path, log: log)
        #expect(writable.passed, "\(writable.lost + writable.torn)")
    }

    @Test("a suspended store releases the journal to another process, and on resume sees its edits and tells its observer")
    func anotherProcessWritesWhileSuspended() async throws {
        let directory = try TemporaryDirectory(prefix: "syncjournal-suspend"); defer { directory.remove() }
        let path = directory.file("store.journal")
        let app = try await LocalStore.open(path: path)
        try await app.create("pin", id: "cafe", fields: [:])
        var observed = app.observe(Query(StoreCrash.kind)).makeAsyncIterator()
        #expect(await observed.next()?.isEmpty == true)
        await app.suspend()

        // The other process (an extension, here the crash tool's writer) runs to its end while the app sleeps.
        let run = try BuiltTool.run("journal-crash", ["store", path, "--seed", "5", "--edits", "60"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("acked "))

        try await app.resume()
        var options = LocalStore.Options()
        options.readOnly = true
        let written = try await LocalStore.open(path: path, options: options)
        let expected = try await written.records(StoreCrash.kind)
        try await written.close()
        #expect(!expected.isEmpty)
        #expect(try await app.records(StoreCrash.kind) == expected)
        #expect(await observed.next() == expected, "the observer hears of the other process's records")
        #expect(try await app.record("pin", id: "cafe") != nil)
        try await app.create("pin", id: "museum", fields: [:])
        try await app.close()
    }
}
