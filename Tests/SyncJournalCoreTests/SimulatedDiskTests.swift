import SyncJournalCore
import SyncJournalPlatform
import SyncJournalTesting
import Testing

// The disk-cache model behind the power-loss tests: what was synced survives
// every crash; each sector written since then ends with its new bytes or its
// old ones, each file with its old length or its new one, in any
// combination; a directory change (a create, a rename) survives only a
// directory sync for certain. Damage to synced bytes is a separate fault.

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
private let sector = SimulatedDisk.sectorSize

/// Every crash mode the model has, with a range of random seeds.
private let everyMode: [SimulatedDisk.CrashMode] = [.processCrash, .loseUnsynced, .sectors(kept: [:], keptEntries: [:]),
                                                    .sectors(kept: ["/d/j": .init(keeping: [0, 1, 2], keepsLength: true), "j": .init(keeping: [0])],
                                                             keptEntries: ["/d": 1, ".": 1])]
    + (0..<64).map { SimulatedDisk.CrashMode.random(seed: $0) }

/// `count` bytes, none of them zero, different for each `seed`.
private func filler(_ count: Int, seed: UInt64) -> [UInt8] {
    var random = SeededGenerator(seed: seed)
    return (0..<count).map { _ in UInt8.random(in: 1...255, using: &random) }
}

/// `bytes` cut or zero-extended to `length`.
private func padded(_ bytes: [UInt8], to length: Int) -> [UInt8] {
    Array(bytes.prefix(length)) + [UInt8](repeating: 0, count: max(0, length - bytes.count))
}

/// Bytes `lower..<upper` of `bytes` (zeros past its end).
private func slice(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
    range.map { $0 < bytes.count ? bytes[$0] : 0 }
}

/// A disk with one file `f`: `durable` synced, then `change` applied unsynced.
private func fileWithUnsyncedChange(durable: [UInt8], _ change: (DiskHandle, FileDescriptor) throws -> Void) throws -> SimulatedDisk {
    let disk = SimulatedDisk()
    let handle = DiskHandle(disk: disk)
    let fd = try handle.durableFile("f", durable)
    try change(handle, fd)
    return disk
}

/// Every state of file `f` on `disk`, each crashed on its own snapshot: `(choice, content after)`.
private func everyState(of disk: SimulatedDisk) throws -> [(choice: SimulatedDisk.SectorChoice, content: [UInt8])] {
    let file = disk.unsyncedSectors(of: "f")
    return try file.choices.map { choice in
        let copy = disk.snapshot()
        copy.crash(.sectors(kept: ["f": choice], keptEntries: [:]))
        return (choice, try #require(copy.contents(of: "f")))
    }
}

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
            // Durable: synced + unsynced. The unsynced truncation to 5 bytes
            // is kept or not; the one sector it touched holds the durable
            // bytes or what the truncation left (zeros past byte 5).
            let durable = synced + unsynced
            #expect(after.count == 5 || after.count == durable.count, "mode \(mode)")
            #expect(Array(after.prefix(5)) == Array(durable.prefix(5)), "mode \(mode)")
            if after.count == durable.count {
                #expect(after == durable || after == padded(Array(durable.prefix(5)), to: durable.count), "mode \(mode)")
            }
        }
    }

    @Test("Every unsynced sector ends with its durable bytes or its current bytes, nothing else, and exactly the kept ones are new",
          arguments: [0, 1, 2])
    func eachSectorIsOldOrNew(layout: Int) throws {
        let durable = filler(3 * sector + 100, seed: 1)
        let disk = try fileWithUnsyncedChange(durable: durable) { handle, fd in
            switch layout {
            case 0:  // an overwrite across a sector boundary
                try handle.write(fd, filler(300, seed: 2), at: sector - 150)
            case 1:  // two overwrites, one sector apart, and an append past the old end
                try handle.write(fd, filler(10, seed: 3), at: 20)
                try handle.write(fd, filler(10, seed: 4), at: 2 * sector + 20)
                try handle.write(fd, filler(700, seed: 5), at: durable.count)
            default:  // the same sector written twice: only the last bytes count
                try handle.write(fd, filler(40, seed: 6), at: sector + 8)
                try handle.write(fd, filler(40, seed: 7), at: sector + 8)
            }
        }
        let current = try #require(disk.contents(of: "f"))
        let file = disk.unsyncedSectors(of: "f")
        let expectedSectors = (0..<((max(durable.count, current.count) + sector - 1) / sector)).filter { index in
            slice(durable, (index * sector)..<((index + 1) * sector)) != slice(current, (index * sector)..<((index + 1) * sector))
        }
        #expect(file.sectors == expectedSectors, "the unsynced sectors are exactly those whose bytes differ")
        #expect(!file.sectors.isEmpty)
        for (choice, content) in try everyState(of: disk) {
            let length = choice.keepsLength ? current.count : durable.count
            #expect(content.count == length, "\(choice)")
            for index in 0..<((length + sector - 1) / sector) {
                let range = (index * sector)..<min((index + 1) * sector, length)
                let found = slice(content, range)
                let old = slice(durable, range)
                let new = slice(current, range)
                #expect(found == old || found == new, "\(choice): sector \(index) holds neither version")
                if old != new {
                    #expect((found == new) == choice.keptSectors.contains(index), "\(choice): sector \(index)")
                }
            }
        }
    }

    @Test("A file's length after a power cut is its durable length or its current one, whether it grew or shrank")
    func lengthIsDurableOrCurrent() throws {
        let durable = filler(2 * sector + 10, seed: 11)
        // Grown: an append of two sectors' worth.
        let grown = try fileWithUnsyncedChange(durable: durable) { handle, fd in try handle.write(fd, filler(2 * sector, seed: 12), at: durable.count) }
        let grownFile = grown.unsyncedSectors(of: "f")
        #expect(grownFile.lengthCanChange && grownFile.durableLength == durable.count && grownFile.currentLength == durable.count + 2 * sector)
        #expect(Set(try everyState(of: grown).map { $0.content.count }) == [durable.count, durable.count + 2 * sector])
        // Shrunk: a truncation into the first sector.
        let truncated = try fileWithUnsyncedChange(durable: durable) { handle, fd in try handle.disk.ftruncate(fd, 100) }
        let states = try everyState(of: truncated)
        #expect(Set(states.map { $0.content.count }) == [100, durable.count])
        for (choice, content) in states {
            #expect(Array(content.prefix(100)) == Array(durable.prefix(100)), "\(choice): bytes before the cut never change")
            guard content.count == durable.count else { continue }
            // The truncation lost: each sector it cleared holds its durable bytes or, kept, the zeros it left.
            for index in 0..<3 {
                let range = max(100, index * sector)..<min((index + 1) * sector, durable.count)
                let expected = choice.keptSectors.contains(index) ? [UInt8](repeating: 0, count: range.count) : Array(durable[range])
                #expect(Array(content[range]) == expected, "\(choice): sector \(index)")
            }
        }
        // With no length change there is one length.
        let overwritten = try fileWithUnsyncedChange(durable: durable) { handle, fd in try handle.write(fd, [1, 2, 3], at: 5) }
        #expect(!overwritten.unsyncedSectors(of: "f").lengthCanChange)
        #expect(Set(try everyState(of: overwritten).map { $0.content.count }) == [durable.count])
    }

    @Test("Past the durable end an unkept sector reads as zeros when the new length survives, and does not exist when it does not")
    func unkeptSectorsPastTheOldEndAreZeros() throws {
        let durable = filler(100, seed: 21)
        let appended = filler(3 * sector, seed: 22)
        let disk = try fileWithUnsyncedChange(durable: durable) { handle, fd in try handle.write(fd, appended, at: durable.count) }
        let file = disk.unsyncedSectors(of: "f")
        #expect(file.sectorsBelowDurableLength == [], "an append leaves the bytes below the old end as they were")
        #expect(file.sectorsBelowCurrentLength == [0, 1, 2, 3])
        #expect(file.crashStateCount == 1 + 16)
        let current = durable + appended
        for (choice, content) in try everyState(of: disk) where choice.keepsLength {
            for index in 0..<4 {
                let range = (index * sector)..<min((index + 1) * sector, current.count)
                let expected = choice.keptSectors.contains(index) ? slice(current, range) : slice(durable, range)
                #expect(slice(content, range) == expected, "\(choice): sector \(index)")
            }
        }
        let lost = disk.snapshot()
        lost.crash(.sectors(kept: ["f": .init(keeping: [0, 1, 2, 3], keepsLength: false)], keptEntries: [:]))
        #expect(lost.contents(of: "f") == durable, "the kept sectors lie past the surviving length")
    }

    @Test("Enumeration lists exactly crashStateCount states, each a different file, and powerLossStates() multiplies files and directories",
          arguments: [0, 1, 2, 3])
    func enumerationIsExactAndDistinct(shape: Int) throws {
        let durable = filler(2 * sector + 37, seed: 31)
        let disk = try fileWithUnsyncedChange(durable: durable) { handle, fd in
            switch shape {
            case 0: try handle.write(fd, filler(5, seed: 32), at: 700)
            case 1: try handle.write(fd, filler(900, seed: 33), at: 300)
            case 2:
                try handle.write(fd, filler(900, seed: 34), at: 300)
                try handle.disk.ftruncate(fd, Int64(4 * sector))
            default:
                try handle.disk.ftruncate(fd, 30)
                try handle.write(fd, filler(20, seed: 35), at: 2 * sector)
            }
        }
        let file = disk.unsyncedSectors(of: "f")
        let states = try everyState(of: disk)
        #expect(states.count == file.crashStateCount)
        #expect(Set(states.map { $0.content }).count == states.count, "\(file): two choices leave the same file")
        #expect(Set(states.map { $0.choice }).count == states.count)
        let expectedCount = file.lengthCanChange
            ? (1 << file.sectorsBelowDurableLength.count) + (1 << file.sectorsBelowCurrentLength.count)
            : 1 << file.sectors.count
        #expect(file.crashStateCount == expectedCount)
        // Both extremes are among them.
        #expect(states.contains { $0.content == durable })
        #expect(states.contains { $0.content == disk.contents(of: "f") })

        // A second file and an unsynced creation: the disk's states are the product.
        let handle = DiskHandle(disk: disk)
        let other = try handle.create("g")
        try handle.write(other, filler(sector + 1, seed: 36), at: 0)
        let all = disk.powerLossStates()
        let g = disk.unsyncedSectors(of: "g")
        #expect(all.files.map { $0.path } == ["f", "g"])
        #expect(all.directories.map { $0.path } == ["."] && all.directories.map { $0.changes } == [1])
        #expect(all.count == file.crashStateCount * g.crashStateCount * 2)
        var seen = Set<[[UInt8]?]>()
        for mode in all {
            let copy = disk.snapshot()
            copy.crash(mode)
            seen.insert([copy.contents(of: "f"), copy.contents(of: "g")])
        }
        // The states where g's creation is undone all look alike in g (it is missing): count those once per f state.
        #expect(seen.count == file.crashStateCount * (g.crashStateCount + 1))
        #expect(disk.contents(of: "g")?.count == sector + 1, "crashing snapshots leaves the disk itself alone")
    }

    @Test("Synced sectors survive every crash state untouched; only sectors written since the sync can change")
    func syncedSectorsSurviveEveryState() throws {
        let disk = SimulatedDisk()
        let handle = DiskHandle(disk: disk)
        let fd = try handle.durableFile("f", filler(4 * sector, seed: 41))
        try handle.write(fd, filler(2 * sector, seed: 42), at: 4 * sector)   // synced below
        try disk.fdatasync(fd)
        let durable = try #require(disk.contents(of: "f"))
        try handle.write(fd, filler(10, seed: 43), at: sector + 5)            // sector 1
        try handle.write(fd, filler(600, seed: 44), at: 6 * sector - 100)     // sectors 5 and 6, and a new length
        #expect(disk.unsyncedSectors(of: "f").sectors == [1, 5, 6])
        var random = SeededGenerator(seed: 45)
        var modes = disk.powerLossStates().map { $0 }
        modes += (0..<50).map { _ in SimulatedDisk.CrashMode.powerLoss(using: &random) } + [.loseUnsynced, .processCrash]
        for mode in modes {
            let copy = disk.snapshot()
            copy.crash(mode)
            let after = try #require(copy.contents(of: "f"))
            #expect(after.count >= durable.count)
            for index in [0, 2, 3, 4] {
                #expect(slice(after, (index * sector)..<((index + 1) * sector)) == slice(durable, (index * sector)..<((index + 1) * sector)), "\(mode): sector \(index)")
            }
            #expect(slice(after, (5 * sector)..<(6 * sector - 100)) == slice(durable, (5 * sector)..<(6 * sector - 100)), "\(mode): the unwritten start of sector 5")
        }
    }

    @Test("Random power cuts keep, lose and mix unsynced sectors, the same seed gives the same state, and the report names it")
    func randomCrashesCoverEveryOutcomeReproducibly() throws {
        var outcomes = Set<String>()
        for seed in UInt64(0)..<200 {
            var results: [[UInt8]?] = []
            var reports: [SimulatedDisk.CrashReport] = []
            var replayed: [UInt8]?
            for _ in 0..<2 {
                let disk = SimulatedDisk()
                let handle = DiskHandle(disk: disk)
                let fd = try handle.durableFile("f", synced)
                try handle.write(fd, filler(3 * sector, seed: seed), at: synced.count)
                let before = disk.snapshot()
                var generator = SeededGenerator(seed: seed)
                reports.append(disk.crash(.powerLoss(using: &generator)))
                results.append(disk.contents(of: "f"))
                before.crash(reports.last!.reproduction)
                replayed = before.contents(of: "f")
            }
            #expect(results[0] == results[1] && reports[0] == reports[1], "seed \(seed)")
            #expect(replayed == results[0], "seed \(seed): the report's state is the state the crash left")
            let content = try #require(results[0])
            #expect(Array(content.prefix(synced.count)) == synced, "seed \(seed)")
            let report = reports[0]
            outcomes.insert(report.filesTorn > 0 ? "torn" : content.count == synced.count ? "lost" : content.count > synced.count && report.sectorsLost == 0 ? "kept" : "zeros")
        }
        #expect(outcomes.isSuperset(of: ["lost", "kept", "torn"]), "\(outcomes)")
    }

    @Test("Durable damage changes exactly the bytes it names, in the synced content and in what a read sees, and nothing a power cut keeps")
    func durableDamageChangesExactlyWhatItSays() throws {
        let content = filler(3 * sector, seed: 51)
        let cases: [(SimulatedDisk.DurableDamage, Range<Int>)] = [
            (.flipBit(byte: 700, bit: 3), 700..<701),
            (.flipBit(byte: 0, bit: 7), 0..<1),
            (.erase(100..<140), 100..<140),
            (.fill(1000..<1100, byte: 0x5A), 1000..<1100),
            (.zeroSector(1), sector..<(2 * sector)),
            (.erase(3 * sector - 10..<3 * sector + 50), (3 * sector - 10)..<(3 * sector)),
        ]
        for (damage, expected) in cases {
            let disk = SimulatedDisk()
            _ = try DiskHandle(disk: disk).durableFile("f", content)
            #expect(disk.damageDurable(path: "f", damage) == expected, "\(damage)")
            let after = try #require(disk.contents(of: "f"))
            #expect(after.count == content.count)
            let changed = content.indices.filter { after[$0] != content[$0] }
            switch damage {
            case .flipBit(let byte, let bit):
                #expect(changed == [byte] && after[byte] ^ content[byte] == 1 << bit, "\(damage)")
            case .fill(let range, let byte):
                #expect(after[range.clamped(to: after.indices)].allSatisfy { $0 == byte }, "\(damage)")
                #expect(changed.allSatisfy { range.contains($0) }, "\(damage)")
            case .zeroSector:
                #expect(after[expected].allSatisfy { $0 == 0 } && changed.allSatisfy { expected.contains($0) }, "\(damage)")
            }
            #expect(disk.unsyncedSectors(of: "f").isEmpty, "\(damage): damage is not an unsynced change")
            disk.crash(.loseUnsynced)
            #expect(disk.contents(of: "f") == after, "\(damage): the damage is durable")
        }
        // An unsynced write over a damaged byte still reads as written; a power cut that loses it shows the damage.
        let disk = SimulatedDisk()
        let fd = try DiskHandle(disk: disk).durableFile("f", content)
        try DiskHandle(disk: disk).write(fd, [0x11], at: 5)
        disk.damageDurable(path: "f", .zeroSector(0))
        #expect(disk.contents(of: "f")?[5] == 0x11 && disk.contents(of: "f")?[6] == 0)
        let lost = disk.snapshot()
        lost.crash(.loseUnsynced)
        #expect(lost.contents(of: "f")?[5] == 0)
        #expect(disk.damageDurable(path: "missing", .zeroSector(0)) == nil)
    }

    @Test("A file created, written and fsynced vanishes in a power cut unless its directory was fsynced")
    func unsyncedCreateIsUndoneWithoutDirectorySync() throws {
        for syncDirectory in [false, true] {
            for mode: SimulatedDisk.CrashMode in [.loseUnsynced, .sectors(kept: ["/d/new": .init(keeping: [0], keepsLength: true)], keptEntries: ["/d": 0])] {
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
            let report = disk.crash(.sectors(kept: [:], keptEntries: ["/d": keptEntries]))
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

    @Test("After a crash every descriptor opened before it fails with EBADF, and the files can be opened again")
    func descriptorsDieInACrash() throws {
        let disk = SimulatedDisk()
        let handle = DiskHandle(disk: disk)
        let fd = try handle.durableFile("f", synced)
        let directory = try disk.open(".", [.readOnly, .directory], 0)
        disk.crash(.processCrash)
        #expect(errnoOf { _ = try pread(disk, fd) } == Errno.badDescriptor.rawValue)
        #expect(errnoOf { _ = try pwrite(disk, fd, [1, 2]) } == Errno.badDescriptor.rawValue)
        #expect(errnoOf { try disk.fdatasync(fd) } == Errno.badDescriptor.rawValue)
        #expect(errnoOf { try disk.fsync(directory) } == Errno.badDescriptor.rawValue)
        #expect(errnoOf { try disk.ftruncate(fd, 0) } == Errno.badDescriptor.rawValue)
        #expect(errnoOf { _ = try disk.fileSize(fd) } == Errno.badDescriptor.rawValue)
        #expect(errnoOf { try disk.lockExclusive(fd) } == Errno.badDescriptor.rawValue)
        #expect(errnoOf { try disk.close(fd) } == Errno.badDescriptor.rawValue)
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
        #expect(errnoOf { try disk.fdatasync(fd) } == Errno.ioError.rawValue)
        #expect(errnoOf { _ = try disk.open("g", [.readWrite, .create], 0o600) } == Errno.ioError.rawValue)
        #expect(errnoOf { try disk.rename("f", "g") } == Errno.ioError.rawValue)
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
        #expect(errnoOf { _ = try pwrite(disk, fd, Array(repeating: 2, count: 6), at: 15) } == Errno.noSpace.rawValue)
        #expect(disk.contents(of: "f") == Array(repeating: 1, count: 15))
        let other = try handle.create("g")
        #expect(errnoOf { _ = try pwrite(disk, other, Array(repeating: 2, count: 6)) } == Errno.noSpace.rawValue,
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
        #expect(errnoOf { try disk.lockExclusive(second) } == Errno.wouldBlock.rawValue)
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
        #expect(report.sectorsLost == 0 && report.lengthChangesLost == 0 && report.entryChangesUndone == 0)
        #expect(report.filesTorn == 0)
    }

    @Test(".sectors names files and directories by path; a file or directory it does not name keeps nothing unsynced")
    func sectorsNamesFilesByPath() throws {
        let disk = SimulatedDisk()
        disk.createDirectory("/a")
        disk.createDirectory("/b")
        let handle = DiskHandle(disk: disk)
        let z = try handle.durableFile("/b/z", [])
        let y = try handle.durableFile("/a/y", [])
        try handle.write(z, [1, 2, 3], at: 0)
        try handle.write(y, [4, 5, 6], at: 0)
        _ = try handle.create("/b/new")
        _ = try handle.create("/a/new")
        #expect(disk.unsyncedFiles().map { $0.path } == ["/a/y", "/b/z"], "empty new files have nothing unsynced")
        let report = disk.crash(.sectors(kept: ["/b/z": .init(keeping: [0], keepsLength: true), "/a/y": .init(keeping: [0], keepsLength: false)],
                                         keptEntries: ["/a": 1]))
        #expect(disk.contents(of: "/a/y") == [], "its sector lies past the length it kept")
        #expect(disk.contents(of: "/b/z") == [1, 2, 3])
        #expect(disk.files(in: "/a") == ["new", "y"])
        #expect(disk.files(in: "/b") == ["z"])
        #expect(report.choices == ["/b/z": .init(keeping: [0], keepsLength: true), "/a/y": .init(keeping: [], keepsLength: false)])
        #expect(report.keptEntries == ["/a": 1, "/b": 0])
        #expect(report.filesTorn == 0 && report.lengthChangesKept == 1 && report.lengthChangesLost == 1)
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
        #expect(errnoOf { _ = try old.open("j.tmp", [.readWrite, .create], 0o600) } == Errno.ioError.rawValue)
        #expect(errnoOf { try old.rename("j", "k") } == Errno.ioError.rawValue)
        #expect(errnoOf { try old.unlink("j") } == Errno.ioError.rawValue)
        #expect(errnoOf { try old.fdatasync(fd) } == Errno.ioError.rawValue)
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
