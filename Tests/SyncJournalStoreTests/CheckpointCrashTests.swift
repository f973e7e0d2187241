import Foundation
import SyncJournalPlatform
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

// Checkpoints: sync the old journal, write the next
// generation's file holding the state, fsync it, rename it into place, fsync
// the directory. A crash injected at every step leaves either the old journal
// or the new one, complete, never neither and never a mix; replay of either
// gives the same state.


/// Reopens a store after `close()`.
fileprivate func reopenAfterCheckpoint(path: String, options: LocalStore.Options) async throws -> LocalStore {
    try await LocalStore.open(path: path, options: options)
}

/// Below the fault injector: logs the kind of every call that reaches the
/// disk while armed and, when asked, copies the journal's files just before
/// the `crashBefore`th of them runs, as a crash at that instant leaves them.
private final class CheckpointCallLog: SystemCalls, Sendable {
    private let base = PosixSystemCalls()
    private let watched: [String]
    private struct State {
        var armed = false
        var calls: [SystemCall] = []
        var crashBefore: Int?
        var image: [String: [UInt8]]?
    }
    private let state = Mutex(State())

    init(watching paths: [String]) { watched = paths }

    /// Starts logging (and counting towards `crashBefore`).
    func arm(crashBefore: Int? = nil) {
        state.withLock { state in
            state = State(armed: true, crashBefore: crashBefore)
        }
    }

    /// Stops logging; returns the calls logged and the files as they were at
    /// the crash point (or now, if fewer calls were made).
    func disarm() -> (calls: [SystemCall], image: [String: [UInt8]]) {
        let (calls, image) = state.withLock { state in
            state.armed = false
            return (state.calls, state.image)
        }
        return (calls, image ?? snapshot())
    }

    private func snapshot() -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for path in watched {
            if let data = FileManager.default.contents(atPath: path) { files[path] = [UInt8](data) }
        }
        return files
    }

    private func log(_ call: SystemCall) {
        let crashNow = state.withLock { state -> Bool in
            guard state.armed else { return false }
            state.calls.append(call)
            return state.calls.count == state.crashBefore
        }
        if crashNow {
            let image = snapshot()
            state.withLock { $0.image = image }
        }
    }

    func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        log(.open)
        return try base.open(path, options, mode)
    }
    func close(_ fd: FileDescriptor) throws(SystemError) {
        log(.close)
        try base.close(fd)
    }
    func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        log(.pread)
        return try base.pread(fd, into: buffer, at: offset)
    }
    func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        log(.pwrite)
        return try base.pwrite(fd, from: buffer, at: offset)
    }
    func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        log(.fdatasync)
        try base.fdatasync(fd)
    }
    func fsync(_ fd: FileDescriptor) throws(SystemError) {
        log(.fsync)
        try base.fsync(fd)
    }
    func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) {
        log(.ftruncate)
        try base.ftruncate(fd, length)
    }
    func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 {
        log(.fstat)
        return try base.fileSize(fd)
    }
    func rename(_ from: String, _ to: String) throws(SystemError) {
        log(.rename)
        try base.rename(from, to)
    }
    func link(_ existing: String, _ new: String) throws(SystemError) { try base.link(existing, new) }
    func unlink(_ path: String) throws(SystemError) {
        log(.unlink)
        try base.unlink(path)
    }
    func lockExclusive(_ fd: FileDescriptor) throws(SystemError) {
        log(.flock)
        try base.lockExclusive(fd)
    }
}

/// A fresh directory for one journal, removed when the value goes away.
private final class CheckpointScratch {
    let temporary: TemporaryDirectory
    /// The journal's path.
    let path: String
    init() throws {
        temporary = try TemporaryDirectory(prefix: "checkpoint-crash")
        path = temporary.file("store.journal")
    }
    var bytes: [UInt8]? { FileManager.default.contents(atPath: path).map { [UInt8]($0) } }
    var leftovers: [String] {
        ((try? temporary.entries()) ?? []).filter { $0 != "store.journal" && $0 != "store.journal.lock" }.sorted()
    }
    deinit { temporary.remove() }
}

@Suite("Checkpoints and crashes")
struct CheckpointCrashTests {
    static func options(_ system: any SystemCalls, threshold: Int = 0) -> LocalStore.Options {
        LocalStore.Options(system: system, clock: StillClock(), upkeep: threshold > 0 ? .records(beyond: threshold) : .off)
    }

    /// A state with something in every part of a checkpoint: server rows, an
    /// outbox with sent flags, attempts and a last error, a quarantined
    /// operation, a cursor, a base row and a conflict (rejections are only
    /// read from old journals).
    static func buildState(_ store: LocalStore) async throws {
        try await store.applyPulledPage(kind: "pin", rows: [
            ServerRow(kind: "pin", id: "a", fields: ["name": .string("Café"), "n": .int(1)], updatedAt: 100),
            ServerRow(kind: "pin", id: "b", fields: ["name": .string("Museum")], updatedAt: 101),
            ServerRow(kind: "pin", id: "gone", updatedAt: 102, deletedAt: 102),
        ], cursor: PullCursor(updatedAt: 102, id: "gone"))
        try await store.create("pin", id: "new", fields: ["name": .string("Tapas"), "tags": .stringSet(["food"])])
        try await store.update("pin", id: "a", changes: ["n": .int(2)])
        try await store.update("pin", id: "b", changes: ["name": .string("Deutsches Museum")])
        try await store.create("note", id: "x", fields: ["text": .string("hello")])
        try await store.update("note", id: "x", changes: ["text": .string("hello, world")])  // merges into the create
        let ready = try await store.operationsReadyToSend(limit: 10)
        #expect(ready.count == 4)
        try await store.beginSending(ready.map(\.id))
        let byKey = Dictionary(uniqueKeysWithValues: ready.map { ($0.key, $0.id) })
        try await store.deliverAcknowledgements([Acknowledgement(operationID: byKey[RecordKey(kind: "pin", id: "new")]!,
                                                     row: ServerRow(kind: "pin", id: "new", fields: ["name": .string("Tapas")], updatedAt: 200))])
        try await store.deliverFailure(byKey[RecordKey(kind: "pin", id: "a")]!, reason: "HTTP 503", permanent: false)
        // Three permanent failures (the default budget) quarantine the note.
        for _ in 0..<3 { try await store.deliverFailure(byKey[RecordKey(kind: "note", id: "x")]!, reason: "HTTP 403", permanent: true) }
        try await store.deliverConflict(byKey[RecordKey(kind: "pin", id: "b")]!,
                                       server: ServerRow(kind: "pin", id: "b", fields: ["name": .string("Museum!")], updatedAt: 150))
        await store.finishSending(ready.map(\.id))
        try await store.delete("pin", id: "a")  // the update was sent: the delete queues behind it
        try await store.update("pin", id: "new", changes: ["n": .int(9)])
        // A pull replaces the row the queued edits of `a` were made on: the old copy is kept as their base.
        try await store.applyPulledPage(kind: "pin", rows: [ServerRow(kind: "pin", id: "a", fields: ["name": .string("Café"), "n": .int(5)], updatedAt: 120)],
                                        cursor: PullCursor(updatedAt: 120, id: "a"))
        let state = try await store.currentState()
        #expect(!state.snapshot.isEmpty && !state.outbox.isEmpty && !state.cursors.isEmpty && !state.conflicts.isEmpty)
        #expect(state.outbox.operations.contains { $0.quarantined && $0.permanentFailures == 3 && $0.lastFailure == .permanent })
        #expect(state.rejections.isEmpty)
        #expect(state.baseRows[RecordKey(kind: "pin", id: "a")]?.updatedAt == 100)
        #expect(state.conflicts.first?.baseRow?.updatedAt == 101)
        #expect(state.outbox.operations.contains { $0.sent && $0.attempts == 1 && $0.lastError == "HTTP 503" })
    }

    /// How a journal file looks: the old one byte for byte, or a complete
    /// checkpoint file of the next generation that replays to `state`.
    enum Found: Equatable { case old, new }

    static func classify(_ bytes: [UInt8]?, old: [UInt8], oldHeader: JournalHeader, oldLastSequence: UInt64, state: StoreState,
                         label: String) throws -> Found? {
        guard let bytes else {
            Issue.record("\(label): no journal at all")
            return nil
        }
        if bytes == old { return .old }
        let scratch = try CheckpointScratch()
        _ = FileManager.default.createFile(atPath: scratch.path, contents: Data(bytes))
        guard let header = try? JournalHeader.decode(bytes) else {
            Issue.record("\(label): neither the old journal nor one with a valid header")
            return nil
        }
        #expect(header.journalID == oldHeader.journalID, "\(label)")
        #expect(header.continuesGeneration == oldHeader.generation, "\(label): continues \(header.continuesGeneration)")
        #expect(header.generation != oldHeader.generation, "\(label)")
        #expect(header.firstSequence == oldLastSequence + 1, "\(label): first sequence \(header.firstSequence) after \(oldLastSequence)")
        let (report, records) = try JournalReader(path: scratch.path).readAll()
        #expect(report.status == .clean, "\(label): the new file is \(report.status)")
        // Checkpoint parts, then the closing record that proves the file complete.
        let closing = records.last
        #expect(closing?.type == .syncHorizon && closing?.syncHorizon == closing?.offset, "\(label): no closing record")
        #expect(records.count > 1 && records.dropLast().allSatisfy { $0.type == .checkpoint }, "\(label): not only checkpoint parts")
        do {
            let replayed = try Replayer.replay(path: scratch.path)
            #expect(replayed.state == state, "\(label): the new file replays to another state")
        } catch {
            Issue.record("\(label): the new file does not replay: \(error)")
        }
        return .new
    }

    // MARK: Every step of a checkpoint

    @Test("checkpoints: a checkpoint's system calls, counted: open, write, fsync, rename, directory fsync")
    func countTheCalls() async throws {
        let calls = try await Self.checkpointCalls()
        #expect(calls.count >= 5)
        #expect(calls.contains(.rename) && calls.contains(.fsync) && calls.contains(.pwrite) && calls.contains(.open))
        // The new file is synced before the rename, the directory after it.
        let rename = calls.firstIndex(of: .rename)!
        #expect(calls[..<rename].contains(.fsync) && calls[(rename + 1)...].contains(.fsync))
    }

    /// The calls one checkpoint of ``buildState(_:)`` makes, in order.
    static func checkpointCalls() async throws -> [SystemCall] {
        let scratch = try CheckpointScratch()
        let log = CheckpointCallLog(watching: [scratch.path])
        let faults = FaultInjectingSystemCalls(wrapping: log)
        let store = try await LocalStore.open(path: scratch.path, options: options(faults))
        try await buildState(store)
        faults.resetCallCounts()
        log.arm()
        try await store.checkpoint()
        let calls = log.disarm().calls
        #expect(faults.callCounts.values.reduce(0, +) == calls.count)
        try await store.close()
        return calls
    }

    @Test("checkpoints: a failure injected at every system call of a checkpoint leaves the old journal or the new one, complete; the store keeps working or is failed; reopening gives the state before the checkpoint")
    func failureAtEveryStep() async throws {
        let calls = try await Self.checkpointCalls()
        var outcomes: [String] = []
        for n in 1...calls.count {
            let kind = calls[n - 1]
            let nthOfKind = calls[..<n].filter { $0 == kind }.count
            var faults: [InjectedFault] = [.ioError]
            if kind == .pwrite { faults.append(.tornWrite(bytes: 100, errno: Errno.noSpace.rawValue)) }
            for fault in faults {
                let outcome = try await Self.checkpoint(failing: FaultRule(call: kind, schedule: .nthCall(nthOfKind), fault: fault),
                                                       label: "call \(n) of \(calls.count) (\(kind) #\(nthOfKind), \(fault))")
                outcomes.append("\(n) \(kind): \(outcome)")
            }
        }
        // Both sides of the rename are reached: some failures keep the old file, others leave the new one.
        #expect(outcomes.contains { $0.contains("old") } && outcomes.contains { $0.contains("new") }, "\(outcomes)")
        print("checkpoint failures: \(outcomes)")
    }

    /// Builds the state, runs a checkpoint with `rule` injected, and checks what it leaves.
    static func checkpoint(failing rule: FaultRule, label: String) async throws -> String {
        let scratch = try CheckpointScratch()
        let faults = FaultInjectingSystemCalls()
        var store = try await LocalStore.open(path: scratch.path, options: options(faults))
        try await buildState(store)
        let before = try await store.currentState()
        let old = try #require(scratch.bytes)
        let oldReport = try JournalReader(path: scratch.path).scan()
        let oldHeader = try #require(oldReport.header)
        let oldLast = try #require(oldReport.lastSequence)

        let id = faults.inject(rule)
        var failure: StoreError?
        do { try await store.checkpoint() } catch { failure = error }
        faults.remove(id)
        #expect(faults.timesFired(id) == 1, "\(label): the fault did not fire")

        let found = try classify(scratch.bytes, old: old, oldHeader: oldHeader, oldLastSequence: oldLast, state: before, label: label)
        #expect(scratch.leftovers.filter { $0.hasSuffix(".checkpoint") }.isEmpty, "\(label): left \(scratch.leftovers)")
        #expect(try await store.currentState() == before, "\(label): the live state changed")
        let status = await store.status
        switch (found, failure) {
        case (.old?, _):
            // Before the rename: the old journal stays in use and the store keeps working.
            #expect(failure != nil, "\(label): the checkpoint reported success but left the old file")
            #expect(status == .ready, "\(label): \(status)")
        case (.new?, nil):
            #expect(status == .ready, "\(label): \(status)")
        case (.new?, _?):
            // After the rename a failure is final.
            if case .failed = status {} else { Issue.record("\(label): a failure after the rename left the store \(status)") }
        case (nil, _):
            return "neither"
        }

        var expected = before
        if status == .ready {
            try await store.create("pin", id: "after", fields: ["n": .int(1)])
            if failure != nil { try await store.checkpoint() }  // a retry works
            try await store.update("pin", id: "after", changes: ["n": .int(2)])
            expected = try await store.currentState()
            #expect(expected.visibleFields(of: RecordKey(kind: "pin", id: "after")) == ["n": .int(2)])
        } else {
            await #expect(throws: StoreError.self, "\(label): a failed store accepted an edit") {
                try await store.create("pin", id: "after", fields: [:])
            }
            #expect(try await store.currentState() == before)
        }
        try? await store.close()

        // Reopen with real system calls: the same state, and a working store.
        store = try await reopenAfterCheckpoint(path: scratch.path, options: options(PosixSystemCalls()))
        #expect(await store.status == .ready, "\(label)")
        #expect(try await store.currentState() == expected, "\(label): reopening gives another state")
        try await store.create("pin", id: "reopened", fields: [:])
        try await store.close()
        let outcome = found == .old ? "old" : "new"
        return failure == nil ? outcome + " (no error)" : outcome + " (\(status == .ready ? "ready" : "failed"))"
    }

    @Test("checkpoints: a crash before every system call of a checkpoint (and after the last) leaves the old or the new journal, and replay of what is left gives the state before the checkpoint")
    func crashAtEveryStep() async throws {
        let calls = try await Self.checkpointCalls()
        var found: [Found] = []
        for crashBefore in 1...(calls.count + 1) {
            let label = crashBefore > calls.count ? "crash after the checkpoint" : "crash before call \(crashBefore) (\(calls[crashBefore - 1]))"
            let scratch = try CheckpointScratch()
            let log = CheckpointCallLog(watching: [scratch.path, scratch.path + ".checkpoint"])
            let store = try await LocalStore.open(path: scratch.path, options: Self.options(log))
            try await Self.buildState(store)
            let before = try await store.currentState()
            let old = try #require(scratch.bytes)
            let oldReport = try JournalReader(path: scratch.path).scan()
            log.arm(crashBefore: crashBefore)
            try await store.checkpoint()
            let image = log.disarm().image
            try await store.close()

            // What the crash left, in a directory of its own.
            let crashed = try CheckpointScratch()
            #expect(image[scratch.path] != nil, "\(label): no journal")
            for (path, bytes) in image {
                let name = path == scratch.path ? crashed.path : crashed.path + ".checkpoint"
                _ = FileManager.default.createFile(atPath: name, contents: Data(bytes))
            }
            guard let kind = try Self.classify(image[scratch.path], old: old, oldHeader: try #require(oldReport.header),
                                                oldLastSequence: try #require(oldReport.lastSequence), state: before, label: label) else { continue }
            found.append(kind)
            let reopened = try await LocalStore.open(path: crashed.path, options: Self.options(PosixSystemCalls()))
            #expect(await reopened.status == .ready, "\(label)")
            #expect(try await reopened.currentState() == before, "\(label): replay after the crash gives another state")
            // A checkpoint file the crash left beside the journal holds only a
            // fold of the journal's records: proven redundant, it is removed.
            let leftover = crashed.path + ".checkpoint"
            if image[scratch.path + ".checkpoint"] != nil {
                if case .removedRedundant(let removed, _) = reopened.recovery?.checkpointLeftover, removed == leftover {} else {
                    Issue.record("\(label): the leftover was \(String(describing: reopened.recovery?.checkpointLeftover))")
                }
            } else {
                #expect(reopened.recovery?.checkpointLeftover == nil, "\(label)")
            }
            #expect(!FileManager.default.fileExists(atPath: leftover) && !FileManager.default.fileExists(atPath: leftover + "-kept"), "\(label)")
            try await reopened.create("pin", id: "after-crash", fields: [:])
            try await reopened.close()
        }
        #expect(found.first == .old && found.last == .new)
        // Once the new file has the name, it keeps it: old ... old, new ... new.
        #expect(found == found.sorted { $0 == .old && $1 == .new }, "\(found)")
    }

    // MARK: Automatic checkpoints

    @Test("checkpoints: past its record limit the store checkpoints by itself: the file stays small and the state the same")
    func automaticCheckpoint() async throws {
        let small = try CheckpointScratch()
        let large = try CheckpointScratch()
        let checkpointing = try await LocalStore.open(path: small.path, options: Self.options(PosixSystemCalls(), threshold: 8))
        let growing = try await LocalStore.open(path: large.path, options: Self.options(PosixSystemCalls(), threshold: 0))
        for round in 0..<30 {
            for store in [checkpointing, growing] {
                try await store.create("pin", id: "r\(round % 4)-\(round)", fields: ["round": .int(Int64(round))])
                try await store.update("pin", id: "r\(round % 4)-\(round)", changes: ["edited": .bool(true)])
                let ready = try await store.operationsReadyToSend(limit: 2)
                try await store.beginSending(ready.map(\.id))
                for (index, entry) in ready.enumerated() {
                    let row = ServerRow(kind: "pin", id: entry.key.id, fields: entry.operation.fields, updatedAt: Int64(round * 10 + index))
                    try await store.deliverAcknowledgements([Acknowledgement(operationID: entry.id, row: row)])
                }
                await store.finishSending(ready.map(\.id))
                if round % 3 == 0 { try await store.delete("pin", id: "r\(round % 4)-\(round)") }
            }
        }
        // The same calls: the same records, the same queue (operation ids aside).
        let recordsA = try await checkpointing.records("pin")
        let recordsB = try await growing.records("pin")
        #expect(recordsA == recordsB)
        #expect(!recordsA.isEmpty)
        let queueA = try await checkpointing.outboxOperations().map { "\($0.operation.kind) \($0.key) \($0.sent) \($0.operation.fields)" }
        let queueB = try await growing.outboxOperations().map { "\($0.operation.kind) \($0.key) \($0.sent) \($0.operation.fields)" }
        #expect(queueA == queueB)
        let live = try await checkpointing.currentState()
        try await checkpointing.close()
        try await growing.close()

        let header = try #require(try JournalReader(path: small.path).header())
        #expect(header.continuesGeneration != 0, "no automatic checkpoint happened")
        #expect(header.firstSequence > 1)
        let smallBytes = try #require(small.bytes).count
        let largeBytes = try #require(large.bytes).count
        #expect(smallBytes * 3 < largeBytes, "checkpointed \(smallBytes) bytes, not checkpointed \(largeBytes)")
        let report = try JournalReader(path: small.path).scan()
        // What is left: the live items, the checkpoint's end part, and fewer than the threshold of dead records.
        #expect(report.recordCount <= live.liveItemCount + 1 + 8 + 2, "\(report.recordCount) records for \(live.liveItemCount) live items")
        let reopened = try await reopenAfterCheckpoint(path: small.path, options: Self.options(PosixSystemCalls(), threshold: 8))
        #expect(try await reopened.currentState() == live)
        try await reopened.close()
    }

    // MARK: Sequence numbers

    @Test("checkpoints: a checkpoint continues the sequence numbers without a gap and names the generation it replaces")
    func sequenceNumbersContinue() async throws {
        let scratch = try CheckpointScratch()
        var store = try await LocalStore.open(path: scratch.path, options: Self.options(PosixSystemCalls()))
        try await Self.buildState(store)
        var previous = try JournalReader(path: scratch.path).readAll()
        for round in 0..<3 {
            try await store.checkpoint()
            let (report, records) = try JournalReader(path: scratch.path).readAll()
            let header = try #require(report.header)
            let old = try #require(previous.report.header)
            #expect(header.continuesGeneration == old.generation, "round \(round)")
            #expect(header.firstSequence == previous.report.lastSequence! + 1, "round \(round)")
            #expect(header.journalID == old.journalID)
            #expect(header.generation != old.generation && header.generation != 0)
            #expect(records.map(\.sequence) == Array(header.firstSequence..<(header.firstSequence + UInt64(records.count))))
            // Appends continue from the checkpoint, also after a reopen.
            try await store.create("pin", id: "seq-\(round)", fields: [:])
            try await store.close()
            store = try await reopenAfterCheckpoint(path: scratch.path, options: Self.options(PosixSystemCalls()))
            try await store.update("pin", id: "seq-\(round)", changes: ["n": .int(Int64(round))])
            previous = try JournalReader(path: scratch.path).readAll()
            // The checkpoint's records, the create, the closing record of the
            // store that closed, and the update.
            #expect(previous.records.map(\.sequence) == Array(header.firstSequence..<(header.firstSequence + UInt64(records.count + 3))))
            #expect(previous.report.header?.generation == header.generation)
        }
        try await store.close()
    }

    // MARK: Incomplete checkpoints

    /// A journal of `parts` written as a checkpoint file that continues generation 0x1234.
    static func craftedCheckpoint(_ parts: [CheckpointPart], then events: [StoreEvent] = [], torn: Int = 0) -> [UInt8] {
        let header = JournalHeader(journalID: JournalID(bytes: Array(repeating: 0x42, count: 16))!, generation: 0xC0FFEE,
                                   continuesGeneration: 0x1234, firstSequence: 501, createdAtMilliseconds: 1_764_000_000_000)
        var bytes = header.encoded()
        var sequence: UInt64 = 501
        for event in parts.map({ StoreEvent.checkpoint($0) }) + events {
            RecordFrame.encode(type: event.recordType, generation: header.generation, sequence: sequence, horizon: 80,
                               payload: event.encodedPayload(), into: &bytes)
            sequence += 1
        }
        return Array(bytes.dropLast(torn))
    }

    static func stateForCrafting() async throws -> StoreState {
        let scratch = try CheckpointScratch()
        let store = try await LocalStore.open(path: scratch.path, options: options(PosixSystemCalls()))
        try await buildState(store)
        let state = try await store.currentState()
        try await store.close()
        return state
    }

    /// Opens a store on `bytes` and returns its status, checking the file was left as it was.
    static func open(_ bytes: [UInt8], label: String) async throws -> (StoreStatus, StoreState?) {
        let scratch = try CheckpointScratch()
        _ = FileManager.default.createFile(atPath: scratch.path, contents: Data(bytes))
        let store = try await LocalStore.open(path: scratch.path, options: options(PosixSystemCalls()))
        let status = await store.status
        let state = try? await store.currentState()
        if case .unreadable = status {
            await #expect(throws: StoreError.self, "\(label): an unreadable store accepted an edit") {
                try await store.create("pin", id: "z", fields: [:])
            }
        }
        try? await store.close()
        if case .unreadable = status {
            #expect(scratch.bytes == bytes, "\(label): the unreadable journal was modified")
            #expect(scratch.leftovers.isEmpty, "\(label): left \(scratch.leftovers)")
        }
        return (status, state)
    }

    @Test("checkpoints: a journal whose checkpoint has parts but no end part (or an end that does not add up) opens the store as unreadable, not as a smaller state")
    func incompleteCheckpointIsUnreadable() async throws {
        let state = try await Self.stateForCrafting()
        let parts = state.checkpointParts()
        #expect(parts.count >= 6)
        guard case .end = parts.last else {
            Issue.record("the last part is not the end part")
            return
        }
        // The complete checkpoint, for contrast, opens with the whole state.
        let (status, replayed) = try await Self.open(Self.craftedCheckpoint(parts), label: "complete")
        #expect(status == .ready)
        #expect(replayed == state)
        // Every strict, non-empty prefix of the parts: unreadable.
        for count in 1..<parts.count {
            let (status, _) = try await Self.open(Self.craftedCheckpoint(Array(parts.prefix(count))), label: "\(count) of \(parts.count) parts")
            if case .unreadable = status {} else { Issue.record("\(count) of \(parts.count) parts, no end: \(status)") }
        }
        // An end part whose counts the parts do not add up to (a part lost from the middle).
        let withoutOutbox = parts.filter { if case .outbox = $0 { return false } else { return true } }
        let (gapStatus, _) = try await Self.open(Self.craftedCheckpoint(withoutOutbox), label: "no outbox part")
        if case .unreadable = gapStatus {} else { Issue.record("a checkpoint without its outbox part: \(gapStatus)") }
        // Ordinary records after parts without an end: unreadable too.
        let edit = StoreEvent.edit(JournalOperation(id: OperationID(bytes: Array(repeating: 9, count: 16))!, kind: .create, entity: "pin",
                                                    recordID: "late", queuedAt: 0), compaction: [])
        let (lateStatus, _) = try await Self.open(Self.craftedCheckpoint(Array(parts.dropLast()), then: [edit]), label: "edit before end")
        if case .unreadable = lateStatus {} else { Issue.record("an edit between the parts and the missing end: \(lateStatus)") }
        // A checkpoint part after ordinary records.
        let (misplaced, _) = try await Self.open(Self.craftedCheckpoint(parts, then: [edit, .checkpoint(parts[0])]), label: "misplaced part")
        if case .unreadable = misplaced {} else { Issue.record("a checkpoint part after an edit: \(misplaced)") }
        // A complete checkpoint followed by edits is fine.
        let (after, afterState) = try await Self.open(Self.craftedCheckpoint(parts, then: [edit]), label: "edit after end")
        #expect(after == .ready)
        #expect(afterState?.visibleFields(of: RecordKey(kind: "pin", id: "late")) == [:])
    }

    @Test("checkpoints: a file that continues a generation but holds no complete checkpoint part (a header alone, or a torn first part) opens as unreadable, not as an empty state")
    func checkpointWithoutAnyPart() async throws {
        let state = try await Self.stateForCrafting()
        let parts = state.checkpointParts()
        let full = Self.craftedCheckpoint(parts)
        let firstPartLength = Self.craftedCheckpoint(Array(parts.prefix(1))).count - JournalFormat.headerLength
        // A header that continues a generation and no record: unreadable, and the file is left as it is.
        let headerOnly = Array(full.prefix(JournalFormat.headerLength))
        let (status, opened) = try await Self.open(headerOnly, label: "header only")
        if case .unreadable = status {} else {
            Issue.record("a continuing header alone: status \(status), \(opened.map { "\($0.liveItemCount) live items" } ?? "no state") instead of unreadable")
        }
        // A torn first part: opening moves the torn bytes to a side file (as for any torn tail), and the store is unreadable.
        let torn = Array(full.prefix(JournalFormat.headerLength + firstPartLength / 2))
        let scratch = try CheckpointScratch()
        _ = FileManager.default.createFile(atPath: scratch.path, contents: Data(torn))
        let store = try await LocalStore.open(path: scratch.path, options: Self.options(PosixSystemCalls()))
        let tornStatus = await store.status
        let tornState = try? await store.currentState()
        await #expect(throws: StoreError.self) { try await store.create("pin", id: "z", fields: [:]) }
        try? await store.close()
        if case .unreadable = tornStatus {} else {
            Issue.record("a torn first part: status \(tornStatus), \(tornState.map { "\($0.liveItemCount) live items" } ?? "no state") instead of unreadable")
        }
        #expect(scratch.leftovers.contains { $0.contains(".torn-") }, "\(scratch.leftovers)")
    }
}
