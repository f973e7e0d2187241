#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SyncJournalCore
import SyncJournalTesting
import Testing

// The disk-cache model behind the power-loss tests (issue 6, item 1): what
// was synced survives every crash, what was not may be kept, lost or torn at
// any byte, and a directory change (a create, a rename) survives only a
// directory sync for certain.

/// Small helpers over the raw calls, failing the test on an unexpected error.
private struct DiskHandle {
    let disk: SimulatedDisk

    func create(_ path: String) throws -> FileDescriptor {
        try disk.open(path, [.readWrite, .create, .truncate], 0o600)
    }

    func openExisting(_ path: String) throws -> FileDescriptor {
        try disk.open(path, .readWrite, 0)
    }

    func write(_ fd: FileDescriptor, _ bytes: [UInt8], at offset: Int) throws {
        try FileIO(disk).writeAll(fd, bytes, at: Int64(offset), path: "?")
    }

    func syncDirectory(_ path: String) throws {
        try FileIO(disk).syncDirectory(path)
    }

    /// A durable file: created, written, fsynced, and its directory fsynced.
    func durableFile(_ path: String, _ bytes: [UInt8]) throws -> FileDescriptor {
        let fd = try create(path)
        try write(fd, bytes, at: 0)
        try disk.fsync(fd)
        try syncDirectory(FileIO.directory(of: path))
        return fd
    }
}

/// The `errno` of the `SystemError` `body` throws, or `nil` if it does not throw.
private func errnoOf(_ body: () throws -> Void) -> Int32? {
    do {
        try body()
        return nil
    } catch let error as SystemError {
        return error.errno
    } catch {
        return -1
    }
}

/// One `pread` of `count` bytes at 0.
private func pread(_ disk: SimulatedDisk, _ fd: FileDescriptor, count: Int = 4) throws(SystemError) -> Int {
    var buffer = [UInt8](repeating: 0, count: count)
    var failure: SystemError?
    let n = buffer.withUnsafeMutableBytes { bytes -> Int in
        do throws(SystemError) { return try disk.pread(fd, into: bytes, at: 0) } catch { failure = error; return -1 }
    }
    if let failure { throw failure }
    return n
}

/// One `pwrite` of `bytes` at `offset`.
private func pwrite(_ disk: SimulatedDisk, _ fd: FileDescriptor, _ bytes: [UInt8], at offset: Int64 = 0) throws(SystemError) -> Int {
    var failure: SystemError?
    let n = bytes.withUnsafeBytes { buffer -> Int in
        do throws(SystemError) { return try disk.pwrite(fd, from: buffer, at: offset) } catch { failure = error; return -1 }
    }
    if let failure { throw failure }
    return n
}

private let synced: [UInt8] = Array("synced-part".utf8)
private let unsynced: [UInt8] = Array("unsynced-tail-bytes".utf8)

/// Every crash mode the model has, with a range of random seeds.
private let everyMode: [SimulatedDisk.CrashMode] = [.processCrash, .loseUnsynced, .cut(keptBytes: [], keptEntries: []),
                                                    .cut(keptBytes: [3, 3, 3], keptEntries: [1, 1])]
    + (0..<64).map { SimulatedDisk.CrashMode.random(seed: $0) }

@Suite("Simulated disk")
struct SimulatedDiskTests {
    @Test("Bytes made durable by fdatasync, in a file whose directory was synced, survive every crash mode")
    func syncedDataSurvivesEveryMode() throws {
        for mode in everyMode {
            let disk = SimulatedDisk()
            disk.createDirectory("/d")
            let handle = DiskHandle(disk: disk)
            let fd = try handle.durableFile("/d/j", synced)
            try handle.write(fd, unsynced, at: synced.count)
            try disk.fdatasync(fd)
            try handle.write(fd, unsynced, at: synced.count + unsynced.count)
            try disk.ftruncate(fd, 5)
            disk.crash(mode)
            let after = try #require(disk.contents(of: "/d/j"), "mode \(mode)")
            // The durable part is synced + unsynced; the tail after it is
            // kept, lost or torn, and the truncation kept or not.
            let durable = synced + unsynced
            if after.count >= durable.count {
                #expect(Array(after.prefix(durable.count)) == durable, "mode \(mode)")
                #expect(after == Array((durable + unsynced).prefix(after.count)), "mode \(mode)")
            } else {
                #expect(after == Array(durable.prefix(5)), "mode \(mode): only the truncation may shorten the file")
            }
        }
    }

    @Test("An unsynced append is cut at every byte offset by .cut, keeping exactly that many bytes")
    func unsyncedWritesAreTornAtEveryByte() throws {
        let tail = unsynced + Array("-second-write".utf8)
        for kept in 0...tail.count {
            let disk = SimulatedDisk()
            disk.createDirectory("/d")
            let handle = DiskHandle(disk: disk)
            let fd = try handle.durableFile("/d/j", synced)
            try handle.write(fd, unsynced, at: synced.count)
            try handle.write(fd, Array(tail[unsynced.count...]), at: synced.count + unsynced.count)
            #expect(disk.unsyncedBytes(of: "/d/j") == tail.count)
            let report = disk.crash(.cut(keptBytes: [kept], keptEntries: []))
            #expect(disk.contents(of: "/d/j") == synced + tail.prefix(kept), "kept \(kept)")
            #expect(disk.unsyncedBytes(of: "/d/j") == 0)
            #expect(report.bytesKept == kept && report.bytesLost == tail.count - kept)
            #expect(report.filesTorn == (kept > 0 && kept < tail.count ? 1 : 0))
        }
    }

    @Test("An unsynced overwrite torn inside keeps the new bytes before the cut and the old ones after it")
    func tornOverwriteMixesOldAndNewAtTheCut() throws {
        let old: [UInt8] = Array(repeating: 0x61, count: 8)
        let new: [UInt8] = Array(repeating: 0x62, count: 8)
        for kept in 0...new.count {
            let disk = SimulatedDisk()
            let handle = DiskHandle(disk: disk)
            let fd = try handle.durableFile("f", old)
            try handle.write(fd, new, at: 0)
            disk.crash(.cut(keptBytes: [kept], keptEntries: []))
            #expect(disk.contents(of: "f") == Array(new.prefix(kept)) + Array(old.dropFirst(kept)), "kept \(kept)")
        }
    }

    @Test("A truncation not synced is one indivisible step of the change stream")
    func unsyncedTruncationIsKeptOrLostWhole() throws {
        for kept in 0...2 {
            let disk = SimulatedDisk()
            let handle = DiskHandle(disk: disk)
            let fd = try handle.durableFile("f", synced)
            try disk.ftruncate(fd, 4)
            try handle.write(fd, [9], at: 4)
            disk.crash(.cut(keptBytes: [kept], keptEntries: []))
            let expected: [[UInt8]] = [synced, Array(synced.prefix(4)), Array(synced.prefix(4)) + [9]]
            #expect(disk.contents(of: "f") == expected[kept], "kept \(kept)")
        }
    }

    @Test("A file created, written and fsynced vanishes in a power cut unless its directory was fsynced")
    func unsyncedCreateIsUndoneWithoutDirectorySync() throws {
        for syncDirectory in [false, true] {
            for mode: SimulatedDisk.CrashMode in [.loseUnsynced, .cut(keptBytes: [synced.count], keptEntries: [0])] {
                let disk = SimulatedDisk()
                disk.createDirectory("/d")
                let handle = DiskHandle(disk: disk)
                let fd = try handle.create("/d/new")
                try handle.write(fd, synced, at: 0)
                try disk.fsync(fd)
                if syncDirectory { try handle.syncDirectory("/d") }
                #expect(disk.unsyncedEntryChanges(in: "/d") == (syncDirectory ? 0 : 1))
                let report = disk.crash(mode)
                #expect(disk.contents(of: "/d/new") == (syncDirectory ? synced : nil), "directory synced: \(syncDirectory), \(mode)")
                #expect(report.entryChangesUndone == (syncDirectory ? 0 : 1))
            }
        }
        // A process crash keeps the page cache: the unsynced create survives.
        let disk = SimulatedDisk()
        let fd = try DiskHandle(disk: disk).create("kept")
        try DiskHandle(disk: disk).write(fd, synced, at: 0)
        disk.crash(.processCrash)
        #expect(disk.contents(of: "kept") == synced)
    }

    @Test("A rename over a file is undone by a power cut unless the directory was fsynced, and each prefix of the directory's changes is a state it can be left in")
    func unsyncedRenameMayBeUndone() throws {
        let old: [UInt8] = Array("old journal".utf8)
        let new: [UInt8] = Array("new checkpoint".utf8)
        // Directory changes: link j.tmp, then move j.tmp -> j.
        let expected: [(j: [UInt8]?, tmp: [UInt8]?)] = [(old, nil), (old, new), (new, nil)]
        for keptEntries in 0...2 {
            let disk = SimulatedDisk()
            disk.createDirectory("/d")
            let handle = DiskHandle(disk: disk)
            _ = try handle.durableFile("/d/j", old)
            let fd = try handle.create("/d/j.tmp")
            try handle.write(fd, new, at: 0)
            try disk.fsync(fd)
            try disk.rename("/d/j.tmp", "/d/j")
            #expect(disk.contents(of: "/d/j") == new)
            #expect(disk.files(in: "/d") == ["j"])
            #expect(disk.unsyncedRenames(in: "/d").map { "\($0.from)>\($0.to)" } == ["j.tmp>j"])
            let report = disk.crash(.cut(keptBytes: [], keptEntries: [keptEntries]))
            #expect(disk.contents(of: "/d/j") == expected[keptEntries].j, "kept \(keptEntries) entry changes")
            #expect(disk.contents(of: "/d/j.tmp") == expected[keptEntries].tmp, "kept \(keptEntries) entry changes")
            #expect(report.renamesUndone == (keptEntries < 2 ? 1 : 0))
        }
        // With the directory fsynced, the rename stands whatever the crash.
        for mode in everyMode {
            let disk = SimulatedDisk()
            let handle = DiskHandle(disk: disk)
            _ = try handle.durableFile("j", old)
            let fd = try handle.create("j.tmp")
            try handle.write(fd, new, at: 0)
            try disk.fsync(fd)
            try disk.rename("j.tmp", "j")
            try handle.syncDirectory(".")
            #expect(disk.unsyncedRenames(in: ".").isEmpty)
            disk.crash(mode)
            #expect(disk.contents(of: "j") == new, "\(mode)")
            #expect(disk.files(in: ".") == ["j"], "\(mode)")
        }
    }

    @Test("A rename within a directory is atomic: a power cut leaves the old file or the new one under the name, never neither and never a mix")
    func renameIsAtomicWithinADirectory() throws {
        let old: [UInt8] = Array("old journal".utf8)
        let new: [UInt8] = Array("new checkpoint".utf8)
        var sawOld = 0
        var sawNew = 0
        for seed in UInt64(0)..<300 {
            let disk = SimulatedDisk()
            disk.createDirectory("/d")
            let handle = DiskHandle(disk: disk)
            _ = try handle.durableFile("/d/j", old)
            let fd = try handle.create("/d/j.tmp")
            try handle.write(fd, new, at: 0)
            try disk.fsync(fd)
            try disk.rename("/d/j.tmp", "/d/j")
            disk.crash(.random(seed: seed))
            let content = disk.contents(of: "/d/j")
            #expect(content == old || content == new, "seed \(seed)")
            if content == old { sawOld += 1 }
            if content == new { sawNew += 1 }
        }
        // Random crashes exercise both outcomes.
        #expect(sawOld > 0 && sawNew > 0)
    }

    @Test("Random power cuts keep, lose and tear unsynced appends, and the same seed gives the same result")
    func randomCrashesCoverEveryOutcomeReproducibly() throws {
        var outcomes = Set<String>()
        for seed in UInt64(0)..<200 {
            var results: [[UInt8]?] = []
            for _ in 0..<2 {
                let disk = SimulatedDisk()
                let handle = DiskHandle(disk: disk)
                let fd = try handle.durableFile("f", synced)
                try handle.write(fd, unsynced, at: synced.count)
                var generator = SeededGenerator(seed: seed)
                disk.crash(.powerLoss(using: &generator))
                results.append(disk.contents(of: "f"))
            }
            #expect(results[0] == results[1], "seed \(seed)")
            let content = try #require(results[0])
            #expect(content == Array((synced + unsynced).prefix(content.count)) && content.count >= synced.count, "seed \(seed)")
            outcomes.insert(content.count == synced.count ? "lost" : content.count == synced.count + unsynced.count ? "kept" : "torn")
        }
        #expect(outcomes == ["lost", "kept", "torn"])
    }

    @Test("After a crash every descriptor opened before it fails with EBADF, and the files can be opened again")
    func descriptorsDieInACrash() throws {
        let disk = SimulatedDisk()
        let handle = DiskHandle(disk: disk)
        let fd = try handle.durableFile("f", synced)
        let directory = try disk.open(".", [.readOnly, .directory], 0)
        disk.crash(.processCrash)
        #expect(errnoOf { _ = try pread(disk, fd) } == EBADF)
        #expect(errnoOf { _ = try pwrite(disk, fd, [1, 2]) } == EBADF)
        #expect(errnoOf { try disk.fdatasync(fd) } == EBADF)
        #expect(errnoOf { try disk.fsync(directory) } == EBADF)
        #expect(errnoOf { try disk.ftruncate(fd, 0) } == EBADF)
        #expect(errnoOf { _ = try disk.fileSize(fd) } == EBADF)
        #expect(errnoOf { try disk.lockExclusive(fd) } == EBADF)
        #expect(errnoOf { try disk.close(fd) } == EBADF)
        let reopened = try handle.openExisting("f")
        #expect(reopened != fd, "descriptor numbers are never reused")
        #expect(try disk.fileSize(reopened) == Int64(synced.count))
        #expect(disk.contents(of: "f") == synced)
    }

    @Test("A frozen disk lets exactly the given number of calls through, then fails every call with EIO until the crash")
    func freezeStopsTheMachineAtAnExactCall() throws {
        let disk = SimulatedDisk()
        let handle = DiskHandle(disk: disk)
        let fd = try handle.durableFile("f", synced)
        let before = disk.callCount
        disk.freeze(afterCalls: 2)
        #expect(!disk.isFrozen)
        try handle.write(fd, [1], at: 0)                 // call 1
        #expect(try disk.fileSize(fd) == Int64(synced.count))   // call 2
        #expect(disk.isFrozen)
        #expect(errnoOf { try disk.fdatasync(fd) } == EIO)
        #expect(errnoOf { _ = try disk.open("g", [.readWrite, .create], 0o600) } == EIO)
        #expect(errnoOf { try disk.rename("f", "g") } == EIO)
        #expect(disk.callCount == before + 5, "failed calls count too")
        #expect(disk.files(in: ".") == ["f"])
        disk.crash(.loseUnsynced)
        #expect(!disk.isFrozen)
        #expect(disk.contents(of: "f") == synced, "the write before the freeze was never synced")
        let again = try handle.openExisting("f")
        try disk.fdatasync(again)
        #expect(disk.crashes == 1)
    }

    @Test("A write that would exceed the disk's capacity fails with ENOSPC and writes nothing")
    func capacityGivesENOSPC() throws {
        let disk = SimulatedDisk(capacityBytes: 20)
        let handle = DiskHandle(disk: disk)
        let fd = try handle.create("f")
        try handle.write(fd, Array(repeating: 1, count: 15), at: 0)
        #expect(errnoOf { _ = try pwrite(disk, fd, Array(repeating: 2, count: 6), at: 15) } == ENOSPC)
        #expect(disk.contents(of: "f") == Array(repeating: 1, count: 15))
        let other = try handle.create("g")
        #expect(errnoOf { _ = try pwrite(disk, other, Array(repeating: 2, count: 6)) } == ENOSPC,
                "capacity counts every file")
        // Overwriting within the file's size needs no space; truncating frees some.
        try handle.write(fd, Array(repeating: 3, count: 15), at: 0)
        try disk.ftruncate(fd, 5)
        try handle.write(other, Array(repeating: 4, count: 15), at: 0)
    }

    @Test("A lock is exclusive between descriptors, is released by close, and by a crash")
    func lockExclusion() throws {
        let disk = SimulatedDisk()
        let handle = DiskHandle(disk: disk)
        let first = try handle.create("j.lock")
        let second = try handle.openExisting("j.lock")
        try disk.lockExclusive(first)
        try disk.lockExclusive(first)
        #expect(errnoOf { try disk.lockExclusive(second) } == EAGAIN)
        try disk.close(first)
        try disk.lockExclusive(second)
        disk.crash(.processCrash)
        let third = try handle.openExisting("j.lock")
        try disk.lockExclusive(third)
    }

    @Test("A second journal writer on the disk is refused; after a crash the journal reopens although the first writer never closed")
    func writerLockIsScopedToTheBoot() async throws {
        let disk = SimulatedDisk()
        disk.createDirectory("/device")
        let path = "/device/app.journal"
        let first = try await JournalWriter.open(path: path, options: .init(system: disk))
        try await first.append(type: RecordType(rawValue: 1), payload: [7])
        await #expect(throws: JournalError.locked(path: path)) {
            try await JournalWriter.open(path: path, options: .init(system: disk))
        }
        disk.crash(.loseUnsynced)
        let second = try await JournalWriter.open(path: path, options: .init(system: disk))
        #expect(second.nextSequence == 2, "the durable append survived")
        try await second.close()
        withExtendedLifetime(first) {}
    }

    @Test("A process crash keeps every unsynced write and directory change")
    func processCrashKeepsEverything() throws {
        let disk = SimulatedDisk()
        let handle = DiskHandle(disk: disk)
        let fd = try handle.create("a")
        try handle.write(fd, synced, at: 0)
        let tmp = try handle.create("b.tmp")
        try handle.write(tmp, unsynced, at: 0)
        try disk.rename("b.tmp", "b")
        let report = disk.crash(.processCrash)
        #expect(disk.contents(of: "a") == synced)
        #expect(disk.contents(of: "b") == unsynced)
        #expect(disk.files(in: ".") == ["a", "b"])
        #expect(report.bytesLost == 0 && report.entryChangesUndone == 0)
    }

    @Test(".cut takes files in path order and directories in path order")
    func cutFollowsPathOrder() throws {
        let disk = SimulatedDisk()
        disk.createDirectory("/a")
        disk.createDirectory("/b")
        let handle = DiskHandle(disk: disk)
        // Created in the reverse of path order.
        let z = try handle.durableFile("/b/z", [])
        let y = try handle.durableFile("/a/y", [])
        try handle.write(z, [1, 2, 3], at: 0)
        try handle.write(y, [4, 5, 6], at: 0)
        _ = try handle.create("/b/new")
        _ = try handle.create("/a/new")
        // Files: /a/new, /a/y, /b/new, /b/z (a new file's stream holds its creating truncation).
        disk.crash(.cut(keptBytes: [0, 0, 0, 2], keptEntries: [1, 0]))
        #expect(disk.contents(of: "/a/y") == [])
        #expect(disk.contents(of: "/b/z") == [1, 2])
        #expect(disk.files(in: "/a") == ["new", "y"])
        #expect(disk.files(in: "/b") == ["z"])
    }

    @Test("A process of an earlier boot can change nothing after the crash: its calls by descriptor and by path fail with EIO")
    func deadProcessCannotTouchTheNextBoot() throws {
        let disk = SimulatedDisk()
        let old = disk.process()
        let handle = DiskHandle(disk: disk)
        let fd = try old.open("j", [.readWrite, .create], 0o600)
        try FileIO(old).writeAll(fd, synced, at: 0, path: "j")
        try old.fsync(fd)
        try FileIO(old).syncDirectory(".")
        disk.crash(.processCrash)
        #expect(errnoOf { _ = try old.open("j.tmp", [.readWrite, .create], 0o600) } == EIO)
        #expect(errnoOf { try old.rename("j", "k") } == EIO)
        #expect(errnoOf { try old.unlink("j") } == EIO)
        #expect(errnoOf { try old.fdatasync(fd) } == EIO)
        #expect(disk.files(in: ".") == ["j"])
        let new = disk.process()
        #expect(new.lockNamespace != old.lockNamespace && new.lockNamespace == disk.lockNamespace)
        let again = try new.open("j", .readWrite, 0)
        #expect(try new.fileSize(again) == Int64(synced.count))
        _ = handle
    }

    @Test("A journal writer left running on a crashed process cannot replace the reopened journal with a checkpoint")
    func abandonedWriterCannotCheckpointOverTheNextBoot() async throws {
        let disk = SimulatedDisk()
        disk.createDirectory("/device")
        let path = "/device/app.journal"
        let abandoned = try await JournalWriter.open(path: path, options: .init(system: disk.process()))
        try await abandoned.append(type: RecordType(rawValue: 1), payload: [1])
        disk.crash(.loseUnsynced)
        let current = try await JournalWriter.open(path: path, options: .init(system: disk.process()))
        try await current.append(type: RecordType(rawValue: 1), payload: [2])
        let before = disk.contents(of: path)
        await #expect(throws: JournalError.self) { try await abandoned.rewrite(records: []) }
        await #expect(throws: JournalError.self) { try await abandoned.append(type: RecordType(rawValue: 1), payload: [3]) }
        #expect(disk.contents(of: path) == before)
        #expect(disk.files(in: "/device").sorted() == ["app.journal", "app.journal.lock"])
        try await current.close()
    }
}
