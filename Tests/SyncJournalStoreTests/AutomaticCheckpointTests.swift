import Dispatch
import Foundation
import SyncJournalPlatform
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

// Automatic checkpoints: the upkeep policy decides when, and the checkpoint
// is written beside the journal while edits go on being acknowledged.

private let upkeepDirectory = "/device"
private let upkeepJournal = "/device/store.journal"

/// A simulated disk's calls, with two stops for a test: the first `pwrite`
/// to the checkpoint file waits for ``release()``, and while recording, a
/// copy of the disk is taken before every call (a crash just before it).
private final class CheckpointHoldingCalls: SystemCalls, Sendable {
    private let disk: SimulatedDisk
    private let base: any SystemCalls
    private let temporary = upkeepJournal + ".checkpoint"
    private struct State {
        var checkpointFDs: Set<FileDescriptor> = []
        var holding = true
        var failing = false
        var recording = false
        var images: [(label: String, disk: SimulatedDisk)] = []
    }
    private let state = Mutex(State())
    private let gate = DispatchSemaphore(value: 0)
    private let held: AsyncStream<Void>
    private let heldContinuation: AsyncStream<Void>.Continuation

    init(disk: SimulatedDisk, holding: Bool = true) {
        self.disk = disk
        state.withLock { $0.holding = holding }
        base = disk.process()
        (held, heldContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    var lockNamespace: String { base.lockNamespace }

    /// Returns once a write of the checkpoint file is held.
    func waitUntilHeld() async {
        for await _ in held { return }
    }

    /// Lets the held write go on (and every later one).
    func release() { gate.signal() }

    /// Makes every write of the checkpoint file fail with `ENOSPC` (or not).
    func failCheckpointWrites(_ on: Bool) { state.withLock { $0.failing = on } }

    /// Starts or stops copying the disk before every call.
    func record(_ on: Bool) { state.withLock { $0.recording = on } }

    /// The copies taken so far, each labelled with the call it came before.
    var images: [(label: String, disk: SimulatedDisk)] { state.withLock { $0.images } }

    private func before(_ call: String) {
        guard state.withLock({ $0.recording }) else { return }
        let image = disk.snapshot()
        state.withLock { $0.images.append(("before \(call) #\($0.images.count + 1)", image)) }
    }

    func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        before("open \(path)")
        let fd = try base.open(path, options, mode)
        if path == temporary { state.withLock { _ = $0.checkpointFDs.insert(fd) } }
        return fd
    }
    func close(_ fd: FileDescriptor) throws(SystemError) {
        before("close")
        state.withLock { _ = $0.checkpointFDs.remove(fd) }
        try base.close(fd)
    }
    func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        try base.pread(fd, into: buffer, at: offset)
    }
    func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        let (hold, fail) = state.withLock { state -> (Bool, Bool) in
            guard state.checkpointFDs.contains(fd) else { return (false, false) }
            defer { state.holding = false }
            return (state.holding, state.failing)
        }
        if fail { throw SystemError(call: .pwrite, code: .noSpace, path: temporary) }
        if hold {
            heldContinuation.yield()
            gate.wait()
        }
        before("pwrite")
        return try base.pwrite(fd, from: buffer, at: offset)
    }
    func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        before("fdatasync")
        try base.fdatasync(fd)
    }
    func fsync(_ fd: FileDescriptor) throws(SystemError) {
        before("fsync")
        try base.fsync(fd)
    }
    func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) {
        before("ftruncate")
        try base.ftruncate(fd, length)
    }
    func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 { try base.fileSize(fd) }
    func rename(_ from: String, _ to: String) throws(SystemError) {
        before("rename")
        try base.rename(from, to)
    }
    func link(_ existing: String, _ new: String) throws(SystemError) { try base.link(existing, new) }
    func unlink(_ path: String) throws(SystemError) {
        before("unlink")
        try base.unlink(path)
    }
    func lockExclusive(_ fd: FileDescriptor) throws(SystemError) { try base.lockExclusive(fd) }
    func directoryEntries(_ path: String) throws(SystemError) -> [String]? { try base.directoryEntries(path) }
}

/// The generation of the journal on `disk`, or `nil` when it has no valid header.
private func generation(on disk: SimulatedDisk) -> UInt64? {
    disk.contents(of: upkeepJournal).flatMap { try? JournalHeader.decode($0) }?.generation
}

/// Crash modes tried on every copy: nothing unsynced kept, everything kept,
/// and a few random power cuts.
private func crashModes(_ index: Int) -> [SimulatedDisk.CrashMode] {
    [.loseUnsynced, .processCrash] + (0..<3).map { .random(seed: UInt64(index * 7 + $0)) }
}

@Suite("Automatic checkpoints")
struct AutomaticCheckpointTests {
    // MARK: The policy

    @Test("upkeep policy: due exactly past max(floor, ratio × live) in bytes or in records; never when off")
    func policyRule() {
        let policy = LocalStore.UpkeepPolicy(minimumJournalBytes: 1000, minimumJournalRecords: 50, journalToLiveRatio: 2.5)
        for live in stride(from: Int64(0), through: 800, by: 40) {
            for journal in stride(from: Int64(0), through: 3000, by: 50) {
                let byBytes = policy.isDue(journalBytes: journal, journalRecords: 0, liveBytes: live, liveItems: 0)
                #expect(byBytes == (journal * 2 > max(2000, 5 * live)), "journal \(journal), live \(live)")
                #expect(!LocalStore.UpkeepPolicy.off.isDue(journalBytes: journal, journalRecords: Int(journal), liveBytes: live, liveItems: 0))
            }
        }
        for items in 0..<40 {
            for records in 0..<200 {
                let byRecords = policy.isDue(journalBytes: 0, journalRecords: records, liveBytes: 0, liveItems: items)
                #expect(byRecords == (records * 2 > max(100, 5 * items)), "records \(records), items \(items)")
            }
        }
        // The default: 1 MiB and 1,000 records, 1.5× the live state.
        let standard = LocalStore.UpkeepPolicy.standard
        #expect(standard.isEnabled && standard.minimumJournalBytes == 1 << 20 && standard.journalToLiveRatio == 1.5)
        #expect(LocalStore.Options().upkeep == .standard)
        #expect(!standard.isDue(journalBytes: 1 << 20, journalRecords: 10, liveBytes: 100, liveItems: 1))
        #expect(standard.isDue(journalBytes: (1 << 20) + 1, journalRecords: 10, liveBytes: 100, liveItems: 1))
        #expect(!standard.isDue(journalBytes: 3 << 20, journalRecords: 10, liveBytes: 2 << 20, liveItems: 1))
        #expect(standard.isDue(journalBytes: (3 << 20) + 1, journalRecords: 10, liveBytes: 2 << 20, liveItems: 1))
        // A ratio too close to 1 is raised to 1.1; huge products are never exceeded.
        #expect(LocalStore.UpkeepPolicy(journalToLiveRatio: 0.5).journalToLiveRatio == 1.1)
        #expect(!LocalStore.UpkeepPolicy.records(beyond: 5).isDue(journalBytes: .max, journalRecords: 5, liveBytes: .max, liveItems: 5))
    }

    // MARK: A journal that never just grows

    @Test("2,000 updates of one record: the store checkpoints by itself under the default policy; the journal stays under 3× its live bytes past the floor and reopens to the same state")
    func updatesOfOneRecord() async throws {
        let directory = try TemporaryDirectory(prefix: "upkeep")
        defer { directory.remove() }
        let path = directory.file("store.journal")
        let options = LocalStore.Options(system: PosixSystemCalls(), clock: StillClock())
        let store = try await LocalStore.open(path: path, options: options)
        let note = String(repeating: "x", count: 700)
        try await store.create("pin", id: "one", fields: ["note": .string(note), "n": .int(0)])
        var checkpointsSeen = 0
        for n in 1...2_000 {
            try await store.update("pin", id: "one", changes: ["note": .string(note + String(n)), "n": .int(Int64(n))])
            if await store.isCheckpointing {
                checkpointsSeen += 1
                await store.waitForUpkeep()
            }
        }
        await store.waitForUpkeep()
        let state = try await store.currentState()
        try await store.close()
        #expect(checkpointsSeen >= 1)
        let header = try #require(try JournalReader(path: path).header())
        #expect(header.continuesGeneration != 0, "no automatic checkpoint happened")
        let bytes = try #require(FileManager.default.contents(atPath: path)).count
        // Without upkeep: over 1.4 MB. With it: the floor (1 MiB) at most, plus one record.
        #expect(bytes <= (1 << 20) + 2_000, "the journal is \(bytes) bytes")
        #expect(!FileManager.default.fileExists(atPath: path + ".checkpoint"))
        let reopened = try await LocalStore.open(path: path, options: options)
        #expect(try await reopened.currentState() == state)
        #expect(try await reopened.record("pin", id: "one")?.fields["n"] == .int(2_000))
        try await reopened.close()
    }

    @Test("upkeep off: the same updates leave the journal growing and no checkpoint")
    func upkeepOff() async throws {
        let directory = try TemporaryDirectory(prefix: "upkeep-off")
        defer { directory.remove() }
        let path = directory.file("store.journal")
        let store = try await LocalStore.open(path: path, options: LocalStore.Options(system: PosixSystemCalls(), clock: StillClock(),
                                                                                       upkeep: .off, preallocationBytes: 0))
        try await store.create("pin", id: "one", fields: ["n": .int(0)])
        for n in 1...1_200 {
            try await store.update("pin", id: "one", changes: ["n": .int(Int64(n))])
            #expect(await !store.isCheckpointing)
        }
        try await store.close()
        let header = try #require(try JournalReader(path: path).header())
        #expect(header.continuesGeneration == 0)
        #expect(try JournalReader(path: path).scan().recordCount > 1_200)
    }

    // MARK: Edits during a checkpoint, and crashes

    @Test("edits made while an automatic checkpoint is written are acknowledged before it ends; a crash before every call after that (and after an edit past the switch) leaves the old journal or the new one, with every acknowledged edit; a leftover is removed")
    func editsDuringCheckpointAndCrashes() async throws {
        let disk = SimulatedDisk()
        disk.createDirectory(upkeepDirectory)
        let calls = CheckpointHoldingCalls(disk: disk)
        var options = LocalStore.Options(system: calls, clock: StillClock(), upkeep: .records(beyond: 20), preallocationBytes: 4096)
        let store = try await LocalStore.open(path: upkeepJournal, options: options)
        for id in 0..<5 { try await store.create("pin", id: "p\(id)", fields: ["n": .int(0)]) }
        // Updates of queued creates merge into them: the live items stay 5
        // and the records grow until the policy starts a checkpoint.
        var round = 0
        while await !store.isCheckpointing {
            round += 1
            try await store.update("pin", id: "p\(round % 5)", changes: ["n": .int(Int64(round))])
            #expect(round < 100, "no automatic checkpoint started")
            if round >= 100 { return }
        }
        await calls.waitUntilHeld()
        let oldGeneration = try #require(generation(on: disk))
        // The checkpoint's file write is held: edits go on, each acknowledged.
        for n in 0..<12 {
            try await store.update("pin", id: "p\(n % 5)", changes: ["during": .int(Int64(n))])
            try await store.create("note", id: "during-\(n)", fields: ["n": .int(Int64(n))])
        }
        try await store.delete("pin", id: "p4")
        #expect(await store.isCheckpointing, "the checkpoint ended while its write was held")
        let acknowledged = try await store.currentState()
        calls.record(true)
        calls.release()
        await store.waitForUpkeep()
        calls.record(false)
        #expect(generation(on: disk) != oldGeneration, "the checkpoint did not replace the journal")
        #expect(try await store.currentState() == acknowledged)
        // An edit after the switch goes to the new file and is durable when acknowledged.
        try await store.create("note", id: "after", fields: ["n": .int(1)])
        let final = try await store.currentState()
        let afterSwitch = disk.snapshot()
        let images = calls.images
        #expect(images.count > 5)

        var found: [String] = []
        for (index, image) in images.enumerated() {
            for mode in crashModes(index) {
                let copy = image.disk.snapshot()
                copy.crash(mode)
                let label = "\(image.label), \(mode)"
                let kept = generation(on: copy) == oldGeneration ? "old" : "new"
                if mode == .loseUnsynced { found.append(kept) }
                options.fileSystem = FileSystem(copy.process())
                let reopened = try await LocalStore.open(path: upkeepJournal, options: options)
                #expect(await reopened.status == .ready, "\(label)")
                #expect(try await reopened.currentState() == acknowledged, "\(label): \(kept) journal, not every acknowledged edit")
                #expect(!copy.files(in: upkeepDirectory).contains { $0.hasSuffix(".checkpoint") || $0.contains("-kept") },
                        "\(label): left \(copy.files(in: upkeepDirectory))")
                try await reopened.close()
            }
        }
        // Both sides of the rename were reached, and once the new file has the name it keeps it.
        #expect(found.first == "old" && found.last == "new", "\(found)")
        #expect(found == found.sorted { $0 == "old" && $1 == "new" }, "\(found)")

        for (index, mode) in crashModes(99).enumerated() {
            let copy = afterSwitch.snapshot()
            copy.crash(mode)
            options.fileSystem = FileSystem(copy.process())
            let reopened = try await LocalStore.open(path: upkeepJournal, options: options)
            #expect(try await reopened.currentState() == final, "crash \(index) after the edit past the switch: \(mode)")
            try await reopened.close()
        }
        try await store.close()
    }

    @Test("closing a store while its automatic checkpoint is written ends the checkpoint: the file beside the journal is removed and the journal keeps every edit")
    func closeDuringCheckpoint() async throws {
        let disk = SimulatedDisk()
        disk.createDirectory(upkeepDirectory)
        let calls = CheckpointHoldingCalls(disk: disk)
        var options = LocalStore.Options(system: calls, clock: StillClock(), upkeep: .off, preallocationBytes: 4096)
        let store = try await LocalStore.open(path: upkeepJournal, options: options)
        for id in 0..<8 { try await store.create("pin", id: "p\(id)", fields: ["n": .int(Int64(id))]) }
        #expect(await store.startAutomaticCheckpoint())
        await calls.waitUntilHeld()
        try await store.update("pin", id: "p1", changes: ["n": .int(100)])
        let state = try await store.currentState()
        let closing = Task { try await store.close() }
        calls.release()
        try await closing.value
        #expect(!disk.files(in: upkeepDirectory).contains { $0.hasSuffix(".checkpoint") }, "\(disk.files(in: upkeepDirectory))")
        disk.crash(.loseUnsynced)
        options.fileSystem = FileSystem(disk.process())
        let reopened = try await LocalStore.open(path: upkeepJournal, options: options)
        #expect(try await reopened.currentState() == state)
        #expect(reopened.recovery?.checkpointLeftover == nil)
        try await reopened.close()
    }

    @Test("an explicit checkpoint() asked for while an automatic one is written waits for it, then runs; both keep every edit")
    func explicitDuringAutomatic() async throws {
        let disk = SimulatedDisk()
        disk.createDirectory(upkeepDirectory)
        let calls = CheckpointHoldingCalls(disk: disk)
        var options = LocalStore.Options(system: calls, clock: StillClock(), upkeep: .off, preallocationBytes: 4096)
        let store = try await LocalStore.open(path: upkeepJournal, options: options)
        for id in 0..<8 { try await store.create("pin", id: "p\(id)", fields: ["n": .int(Int64(id))]) }
        #expect(await store.startAutomaticCheckpoint())
        await calls.waitUntilHeld()
        try await store.update("pin", id: "p2", changes: ["n": .int(200)])
        let explicit = Task { try await store.checkpoint() }
        calls.release()
        try await explicit.value
        await store.waitForUpkeep()
        let state = try await store.currentState()
        try await store.close()
        disk.crash(.loseUnsynced)
        options.fileSystem = FileSystem(disk.process())
        let reopened = try await LocalStore.open(path: upkeepJournal, options: options)
        #expect(try await reopened.currentState() == state)
        #expect(try await reopened.record("pin", id: "p2")?.fields["n"] == .int(200))
        try await reopened.close()
    }

    @Test("a failed automatic checkpoint (a full disk) removes its file and leaves the journal in use and the store ready; the next is tried only once the journal has grown by half, and then replaces it")
    func failedCheckpoint() async throws {
        let disk = SimulatedDisk()
        disk.createDirectory(upkeepDirectory)
        let calls = CheckpointHoldingCalls(disk: disk, holding: false)
        calls.failCheckpointWrites(true)
        var options = LocalStore.Options(system: calls, clock: StillClock(), upkeep: .records(beyond: 20), preallocationBytes: 4096)
        let store = try await LocalStore.open(path: upkeepJournal, options: options)
        for id in 0..<5 { try await store.create("pin", id: "p\(id)", fields: ["n": .int(0)]) }
        let firstGeneration = try #require(generation(on: disk))
        var round = 0
        func edit() async throws {
            round += 1
            try await store.update("pin", id: "p\(round % 5)", changes: ["n": .int(Int64(round))])
        }
        while await !store.isCheckpointing, round < 100 { try await edit() }
        await store.waitForUpkeep()
        let failedAt = await store.journalBytes
        #expect(generation(on: disk) == firstGeneration)
        #expect(!disk.files(in: upkeepDirectory).contains { $0.hasSuffix(".checkpoint") }, "\(disk.files(in: upkeepDirectory))")
        #expect(await store.status == .ready)
        // Still due by its records, but not tried again until the journal is half as large again.
        var tried = false
        while !tried, round < 400 {
            try await edit()
            tried = await store.isCheckpointing
            if tried { #expect(await store.journalBytes >= failedAt + failedAt / 2) }
        }
        #expect(tried)
        calls.failCheckpointWrites(false)
        await store.waitForUpkeep()
        while await store.automaticCheckpoints == 0, round < 800 {
            try await edit()
            await store.waitForUpkeep()
        }
        #expect(await store.automaticCheckpoints == 1)
        #expect(generation(on: disk) != firstGeneration)
        let state = try await store.currentState()
        try await store.close()
        disk.crash(.loseUnsynced)
        options.fileSystem = FileSystem(disk.process())
        let reopened = try await LocalStore.open(path: upkeepJournal, options: options)
        #expect(try await reopened.currentState() == state)
        try await reopened.close()
    }
}
