import SyncJournalPlatform
import SyncJournalCore

/// An in-memory file system with a disk cache that a test can cut the power
/// to: the seam a power-loss test or the simulator gives a ``LocalStore`` or a
/// ``JournalWriter`` instead of the real system calls.
///
/// Every file has a **durable** content (what was there at its last
/// successful `fdatasync`/`fsync`) and a **current** one (what a read sees
/// now). Every directory has its durable entries and the creations, renames
/// and unlinks made since its last `fsync`. ``crash(_:)`` models what a power
/// cut leaves, the way a real disk does it, at sector granularity
/// (``sectorSize``, 512 bytes):
///
/// - each file, on its own, keeps **any subset** of its unsynced sectors, in
///   any order: every sector whose bytes changed since the last sync ends up
///   either with its current bytes or with its durable bytes, never a mix
///   within the sector, never anything else. Where the durable file had no
///   bytes (past its old end) an unkept sector reads as zeros;
/// - each file's length is its durable length or its current length (an
///   unsynced extension or truncation is kept or not); sectors past that
///   length do not exist;
/// - each directory keeps a prefix of its unsynced entry changes (so a rename
///   not followed by a directory sync may be undone).
///
/// ``CrashMode/sectors(kept:keptEntries:)`` names one such state exactly, and
/// ``powerLossStates()`` lists them all, so a test can try every one on a
/// ``snapshot()``; ``CrashMode/random(seed:)`` draws one. After any crash every
/// open descriptor is dead (any call on it fails with `EBADF`, as the process
/// that held it is gone) and every lock is released.
///
/// A power cut only ever loses or keeps what was never synced. A disk that
/// later changes synced bytes (``damageDurable(path:_:)``) is a separate,
/// explicit fault.
///
/// ```swift
/// let disk = SimulatedDisk()
/// disk.createDirectory("/device")
/// let store = try await LocalStore.open(path: "/device/pins.journal", options: .init(fileSystem: disk.fileSystem))
/// try await store.create("pin", fields: ["name": .string("Cafe")])   // durable: it returned
/// var random = SeededGenerator(seed: 7)
/// disk.crash(.powerLoss(using: &random))                              // the old store is dead
/// let reopened = try await LocalStore.open(path: "/device/pins.journal", options: .init(fileSystem: disk.fileSystem))
/// ```
public final class SimulatedDisk: SystemCalls {
    /// What a crash does to changes not yet synced.
    public enum CrashMode: Sendable, Hashable, CustomStringConvertible {
        /// The process dies, the machine does not (`kill -9`): the page cache
        /// survives, so every write and every directory change is kept.
        case processCrash
        /// The power is cut and nothing unsynced reaches the disk.
        case loseUnsynced
        /// The power is cut and exactly these unsynced changes reach the
        /// disk: for each file named by its current path, the sectors and
        /// length of its ``SectorChoice``; for each directory named by its
        /// path, the first `keptEntries[path]` of its unsynced entry changes.
        /// A file or directory not named keeps nothing unsynced (as does a
        /// file no name reaches).
        case sectors(kept: [String: SectorChoice], keptEntries: [String: Int])
        /// The power is cut with every choice drawn from `seed`: each file's
        /// unsynced sectors are kept with probability 1/2 each, its length
        /// change with probability 1/2, and each directory keeps a uniformly
        /// random prefix of its unsynced entry changes. Files are drawn in
        /// path order, then directories, so a seed always gives the same state.
        /// The ``CrashReport`` names the state drawn
        /// (``CrashReport/reproduction``).
        case random(seed: UInt64)

        /// A power cut with every choice drawn from `generator` (see ``random(seed:)``).
        public static func powerLoss<G: RandomNumberGenerator>(using generator: inout G) -> CrashMode {
            .random(seed: generator.next())
        }

        /// `process crash`, `lose unsynced`, `power cut (seed 7)`, or the kept sectors and entries.
        public var description: String {
            switch self {
            case .processCrash: return "process crash"
            case .loseUnsynced: return "lose unsynced"
            case .random(let seed): return "power cut (seed \(seed))"
            case .sectors(let kept, let keptEntries):
                let files = kept.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
                let directories = keptEntries.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value) entry changes kept" }
                let parts = files + directories
                return "power cut keeping " + (parts.isEmpty ? "nothing unsynced" : parts.joined(separator: "; "))
            }
        }
    }

    /// A file's content: the durable part, the current part, and the sectors
    /// written or resized since the last sync (a superset of those that differ).
    private struct Inode {
        var durable: [UInt8] = []
        var current: [UInt8] = []
        var touched: Set<Int> = []
        var lockedBy: Int32?
        /// How far the file holds blocks: bytes written, not a size set by
        /// `ftruncate`, which leaves a hole that takes no space (as on a
        /// real file system). What a full disk counts.
        var allocated = 0
    }

    /// A directory entry change not yet made durable by an `fsync` of the directory.
    private enum EntryChange {
        case link(name: String, inode: Int)
        case unlink(name: String)
        /// A rename inside one directory: atomic, so a crash keeps the old name or the new one, never neither.
        case move(from: String, to: String, inode: Int)
    }

    private struct Directory {
        var durable: [String: Int] = [:]
        var pending: [EntryChange] = []
        var current: [String: Int] = [:]
    }

    private struct OpenFile {
        var inode: Int?          // nil: a directory
        var directory: String?
        var writable: Bool
    }

    private struct State {
        var inodes: [Int: Inode] = [:]
        var nextInode = 1
        var directories: [String: Directory] = [:]
        var descriptors: [Int32: OpenFile] = [:]
        var nextDescriptor: Int32 = 3
        var boot = 0
        var crashes = 0
        var capacity: Int?
        var syncs = 0
        var calls = 0
        /// After this many more calls, every call fails with `EIO` until the crash.
        var freezeAfter: Int?
    }

    private let state: Mutex<State>
    /// A name for this disk in lock keys, so two disks (or two boots of one) never share a lock.
    fileprivate let identity: String

    /// An empty disk. With `capacityBytes`, a write that would make the files'
    /// current contents exceed it fails with `ENOSPC` (nothing written).
    public init(capacityBytes: Int? = nil) {
        var state = State()
        state.capacity = capacityBytes
        self.state = Mutex(state)
        identity = "simulated-disk-\(UInt64.random(in: 0...UInt64.max))"
    }

    /// Scopes the process-wide writer registry to this disk and boot: a crash
    /// releases every lock, so a writer abandoned by a crash never blocks the reopen.
    package var lockNamespace: String { identity + "-boot-\(state.withLock { $0.boot })/" }

    /// The disk as a file system to open a store on (each call goes to the
    /// current boot; see ``process()`` for calls that die with a crash).
    public var fileSystem: FileSystem { FileSystem(self) }

    // MARK: Processes

    /// The system calls of a process running on this machine now: the same
    /// disk, but once the machine crashes every call it makes fails with
    /// `EIO`, by descriptor or by path. Give it to a store that may still be
    /// running when the power goes (a simulator's device), so nothing the
    /// dead process does afterwards (say, a checkpoint's `open` and `rename`)
    /// reaches the disk of the next boot. The disk itself, used directly,
    /// cannot tell a dead process's path calls from the new boot's.
    ///
    /// ```swift
    /// let store = try await LocalStore.open(path: path, options: .init(fileSystem: disk.process().fileSystem))
    /// disk.crash(.powerLoss(using: &random))   // the store may run on; its calls all fail
    /// let reopened = try await LocalStore.open(path: path, options: .init(fileSystem: disk.process().fileSystem))
    /// ```
    public func process() -> Process {
        Process(disk: self, boot: state.withLock { $0.boot })
    }

    /// The system calls of one boot of a ``SimulatedDisk`` (see ``SimulatedDisk/process()``).
    public struct Process: SystemCalls {
        /// The machine.
        public let disk: SimulatedDisk
        /// The boot this process runs in; after a crash its calls fail.
        public let boot: Int

        package var lockNamespace: String { disk.identity + "-boot-\(boot)/" }

        package func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
            try disk.open(path, options, mode, boot: boot)
        }
        package func close(_ fd: FileDescriptor) throws(SystemError) { try disk.close(fd, boot: boot) }
        package func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
            try disk.pread(fd, into: buffer, at: offset, boot: boot)
        }
        package func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
            try disk.pwrite(fd, from: buffer, at: offset, boot: boot)
        }
        package func fdatasync(_ fd: FileDescriptor) throws(SystemError) { try disk.sync(fd, call: .fdatasync, boot: boot) }
        package func fsync(_ fd: FileDescriptor) throws(SystemError) { try disk.sync(fd, call: .fsync, boot: boot) }
        package func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) { try disk.ftruncate(fd, length, boot: boot) }
        package func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 { try disk.fileSize(fd, boot: boot) }
        package func rename(_ from: String, _ to: String) throws(SystemError) { try disk.rename(from, to, boot: boot) }
        package func unlink(_ path: String) throws(SystemError) { try disk.unlink(path, boot: boot) }
        package func link(_ existing: String, _ new: String) throws(SystemError) { try disk.link(existing, new, boot: boot) }
        package func lockExclusive(_ fd: FileDescriptor) throws(SystemError) { try disk.lockExclusive(fd, boot: boot) }
        package func makeDirectory(_ path: String) throws(SystemError) { try disk.makeDirectory(path, boot: boot) }
        package func directoryEntries(_ path: String) throws(SystemError) -> [String]? { try disk.directoryEntries(path, boot: boot) }
    }

    // MARK: Inspection and crashes

    /// What a crash did to the changes that were not yet durable.
    public struct CrashReport: Sendable, Hashable, CustomStringConvertible {
        /// Files that had unsynced changes (a sector or a length that could change).
        public var filesWithUnsyncedChanges = 0
        /// Files left neither as they were at their last sync nor as a read
        /// saw them before the crash: some unsynced sectors kept and some
        /// lost, or the new length kept without some of the sectors it covers
        /// (or the other way round).
        public var filesTorn = 0
        /// Unsynced sectors (that exist at the surviving length) that reached the disk.
        public var sectorsKept = 0
        /// Unsynced sectors (that exist at the surviving length) that kept their durable bytes.
        public var sectorsLost = 0
        /// Unsynced size changes (extensions, truncations) that survived.
        public var lengthChangesKept = 0
        /// Unsynced size changes that did not survive.
        public var lengthChangesLost = 0
        /// Unsynced directory entry changes (creations, renames, unlinks) that did not survive.
        public var entryChangesUndone = 0
        /// Unsynced directory entry changes that did survive.
        public var entryChangesKept = 0
        /// Unsynced renames that were undone (the old name is back).
        public var renamesUndone = 0
        /// Unsynced renames that survived.
        public var renamesKept = 0
        /// What each file with unsynced changes kept, by its path before the
        /// crash (normalized: only sectors that exist at the surviving length).
        public var choices: [String: SectorChoice] = [:]
        /// How many unsynced entry changes each directory that had some kept.
        public var keptEntries: [String: Int] = [:]

        /// The same crash as an explicit state: a test that finds a problem
        /// after a random crash names (and replays) the state with this.
        public var reproduction: CrashMode { .sectors(kept: choices, keptEntries: keptEntries) }

        public var description: String {
            "\(filesWithUnsyncedChanges) files with unsynced changes (\(filesTorn) torn), \(sectorsKept) unsynced sectors kept, \(sectorsLost) lost, "
                + "\(lengthChangesKept) length changes kept, \(lengthChangesLost) lost, "
                + "\(entryChangesKept) entry changes kept (\(renamesKept) renames), \(entryChangesUndone) undone (\(renamesUndone) renames); "
                + "state: \(reproduction)"
        }
    }

    /// Crashes the machine (see ``CrashMode``): unsynced changes are resolved
    /// as the mode says, every descriptor dies and every lock is released.
    /// Returns what was kept and lost, and which state was chosen.
    ///
    /// A store opened on the disk itself before the crash must not run on
    /// afterwards: its descriptors fail with `EBADF`, but a call by path (an
    /// `open` or a `rename` of a checkpoint) cannot be told from the new
    /// boot's. Stop it first with ``freeze(afterCalls:)`` and let its pending
    /// calls fail, or open it on a ``process()``, whose calls all fail after the crash.
    ///
    /// ```swift
    /// disk.crash(.loseUnsynced)   // only what was fdatasync'ed survives
    /// ```
    @discardableResult
    public func crash(_ mode: CrashMode) -> CrashReport {
        state.withLock { state in
            var report = CrashReport()
            var random: SeededGenerator?
            if case .random(let seed) = mode { random = SeededGenerator(seed: seed) }
            let paths = Self.currentPaths(state)
            for number in Self.inodesInPathOrder(state) {
                var inode = state.inodes[number]!
                let path = paths[number]
                let file = Self.unsyncedSectors(of: inode, path: path ?? "")
                if !file.isEmpty {
                    var choice: SectorChoice
                    switch mode {
                    case .processCrash: choice = SectorChoice(keeping: Set(file.sectors), keepsLength: true)
                    case .loseUnsynced: choice = .durable
                    case .sectors(let kept, _): choice = path.flatMap { kept[$0] } ?? .durable
                    case .random: choice = file.randomChoice(using: &random!)
                    }
                    choice = file.normalized(choice)
                    let length = choice.keepsLength ? file.currentLength : file.durableLength
                    let relevant = length == file.currentLength ? file.sectorsBelowCurrentLength : file.sectorsBelowDurableLength
                    report.filesWithUnsyncedChanges += 1
                    report.sectorsKept += choice.keptSectors.count
                    report.sectorsLost += relevant.count - choice.keptSectors.count
                    if file.lengthCanChange {
                        if choice.keepsLength { report.lengthChangesKept += 1 } else { report.lengthChangesLost += 1 }
                    }
                    let survivor = Self.survivor(of: inode, keeping: choice)
                    if survivor != inode.durable && survivor != inode.current { report.filesTorn += 1 }
                    if let path { report.choices[path] = choice }
                    inode.durable = survivor
                }
                inode.current = inode.durable
                inode.touched = []
                inode.lockedBy = nil
                state.inodes[number] = inode
            }
            for path in state.directories.keys.sorted() {
                var directory = state.directories[path]!
                let count = directory.pending.count
                var keep: Int
                switch mode {
                case .processCrash: keep = count
                case .loseUnsynced: keep = 0
                case .sectors(_, let keptEntries): keep = keptEntries[path] ?? 0
                case .random: keep = Int.random(in: 0...count, using: &random!)
                }
                keep = min(max(0, keep), count)
                var entries = directory.durable
                for change in directory.pending.prefix(keep) { Self.apply(change, to: &entries) }
                if count > 0 { report.keptEntries[path] = keep }
                report.entryChangesKept += keep
                report.entryChangesUndone += count - keep
                for (position, change) in directory.pending.enumerated() {
                    guard case .move = change else { continue }
                    if position < keep { report.renamesKept += 1 } else { report.renamesUndone += 1 }
                }
                directory.durable = entries
                directory.current = entries
                directory.pending = []
                state.directories[path] = directory
            }
            // Files no name reaches any more are gone.
            let reachable = Set(state.directories.values.flatMap { $0.current.values })
            state.inodes = state.inodes.filter { reachable.contains($0.key) }
            state.descriptors = [:]
            state.freezeAfter = nil
            state.boot += 1
            state.crashes += 1
            return report
        }
    }

    /// What a power cut could do to the file at `path` now (its sectors and
    /// lengths; empty when everything is synced). For a missing file, an
    /// empty description.
    ///
    /// ```swift
    /// let file = disk.unsyncedSectors(of: "/device/app.journal")
    /// print(file.crashStateCount)   // 2^sectors, or the sum over both lengths
    /// ```
    public func unsyncedSectors(of path: String) -> UnsyncedSectors {
        state.withLock { state in
            let (parent, name) = Self.split(path)
            guard let number = state.directories[parent]?.current[name], let inode = state.inodes[number] else {
                return UnsyncedSectors(path: path, durableLength: 0, currentLength: 0, sectorsBelowDurableLength: [], sectorsBelowCurrentLength: [])
            }
            return Self.unsyncedSectors(of: inode, path: path)
        }
    }

    /// Every file with something a power cut could change, in path order.
    public func unsyncedFiles() -> [UnsyncedSectors] {
        state.withLock { state in
            let paths = Self.currentPaths(state)
            return Self.inodesInPathOrder(state).compactMap { number -> UnsyncedSectors? in
                guard let path = paths[number] else { return nil }
                let file = Self.unsyncedSectors(of: state.inodes[number]!, path: path)
                return file.isEmpty ? nil : file
            }
        }
    }

    /// Every distinct state a power cut now would leave the disk in (see
    /// ``PowerLossStates``): enumerate them when there are few, draw some
    /// when there are many. (Files no name reaches are left out: they are
    /// gone after any crash, or, if their unlink is undone, keep nothing unsynced.)
    public func powerLossStates() -> PowerLossStates {
        let directories = state.withLock { state in
            state.directories.keys.sorted().compactMap { path -> (path: String, changes: Int)? in
                let count = state.directories[path]!.pending.count
                return count > 0 ? (path, count) : nil
            }
        }
        return PowerLossStates(files: unsyncedFiles(), directories: directories)
    }

    /// A copy of this machine's disk as it stands now, unsynced changes
    /// included, with no process running on it (no open descriptor, no
    /// lock) and its own lock namespace: crash the copy in one state, then
    /// take another copy for the next state.
    ///
    /// ```swift
    /// for mode in disk.powerLossStates() {
    ///     let copy = disk.snapshot()
    ///     copy.crash(mode)
    ///     let reopened = try await LocalStore.open(path: path, options: .init(fileSystem: copy.process().fileSystem))
    /// }
    /// ```
    public func snapshot() -> SimulatedDisk {
        let copy = state.withLock { state in
            var copy = State()
            copy.inodes = state.inodes.mapValues { inode in
                var inode = inode
                inode.lockedBy = nil
                return inode
            }
            copy.nextInode = state.nextInode
            copy.directories = state.directories
            copy.capacity = state.capacity
            copy.nextDescriptor = state.nextDescriptor
            return copy
        }
        return SimulatedDisk(state: copy)
    }

    private init(state: State) {
        self.state = Mutex(state)
        identity = "simulated-disk-\(UInt64.random(in: 0...UInt64.max))"
    }

    /// Changes the **durable** bytes of the file at `path` the way a failing
    /// disk does after the fact (see ``DurableDamage``), within its durable
    /// length; where the current content still holds the old durable byte
    /// (nothing newer was written over it), a read sees the damage too.
    /// Returns the byte range actually damaged (clamped to the durable
    /// length), or `nil` when there is no file at `path`.
    ///
    /// Recovery must report what this does (a corrupt journal, a refused
    /// open, records set aside), never repair it silently. Apply it between
    /// crashes, to data that is at rest.
    ///
    /// ```swift
    /// disk.damageDurable(path: "/device/app.journal", .zeroSector(1))
    /// ```
    @discardableResult
    public func damageDurable(path: String, _ damage: DurableDamage) -> Range<Int>? {
        state.withLock { state in
            let (parent, name) = Self.split(path)
            guard let number = state.directories[parent]?.current[name], var inode = state.inodes[number] else { return nil }
            let wanted = damage.range
            let lower = min(max(0, wanted.lowerBound), inode.durable.count)
            let upper = min(max(lower, wanted.upperBound), inode.durable.count)
            for offset in lower..<upper {
                let old = inode.durable[offset]
                let new = damage.apply(to: old, at: offset)
                inode.durable[offset] = new
                if offset < inode.current.count && inode.current[offset] == old { inode.current[offset] = new }
            }
            state.inodes[number] = inode
            return lower..<upper
        }
    }

    /// Each reachable file's current path (the first in path order when it has several).
    private static func currentPaths(_ state: State) -> [Int: String] {
        var paths: [Int: String] = [:]
        for directoryPath in state.directories.keys.sorted() {
            let directory = state.directories[directoryPath]!
            for name in directory.current.keys.sorted() where paths[directory.current[name]!] == nil {
                paths[directory.current[name]!] = directoryPath == "." ? name : (directoryPath == "/" ? "/" + name : directoryPath + "/" + name)
            }
        }
        return paths
    }

    /// The byte at `offset` of `content`, or zero past its end.
    private static func byte(_ content: [UInt8], _ offset: Int) -> UInt8 {
        offset < content.count ? content[offset] : 0
    }

    /// Whether durable and current bytes differ anywhere in `sector` below `length`.
    private static func differs(_ inode: Inode, sector: Int, below length: Int) -> Bool {
        let lower = sector * sectorSize
        let upper = min(lower + sectorSize, length)
        guard lower < upper else { return false }
        if upper <= inode.durable.count && upper <= inode.current.count {
            return inode.durable[lower..<upper] != inode.current[lower..<upper]
        }
        for offset in lower..<upper where byte(inode.durable, offset) != byte(inode.current, offset) { return true }
        return false
    }

    private static func unsyncedSectors(of inode: Inode, path: String) -> UnsyncedSectors {
        let touched = inode.touched.sorted()
        return UnsyncedSectors(path: path, durableLength: inode.durable.count, currentLength: inode.current.count,
                               sectorsBelowDurableLength: touched.filter { differs(inode, sector: $0, below: inode.durable.count) },
                               sectorsBelowCurrentLength: touched.filter { differs(inode, sector: $0, below: inode.current.count) })
    }

    /// The content a power cut leaves of `inode` when it keeps `choice`.
    private static func survivor(of inode: Inode, keeping choice: SectorChoice) -> [UInt8] {
        let length = choice.keepsLength ? inode.current.count : inode.durable.count
        var result = Array(inode.durable.prefix(length))
        if result.count < length { result.append(contentsOf: repeatElement(0, count: length - result.count)) }
        for sector in choice.keptSectors {
            let lower = sector * sectorSize
            let upper = min(lower + sectorSize, length)
            guard lower < upper else { continue }
            for offset in lower..<upper { result[offset] = byte(inode.current, offset) }
        }
        return result
    }

    /// Marks the sectors covering `range` as changed since the last sync.
    private static func touch(_ inode: inout Inode, _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        for sector in (range.lowerBound / sectorSize)...((range.upperBound - 1) / sectorSize) { inode.touched.insert(sector) }
    }

    /// Every file, ordered by its current path (directory, then name); files
    /// no name reaches (unlinked while open) last, oldest first.
    private static func inodesInPathOrder(_ state: State) -> [Int] {
        var ordered: [Int] = []
        var seen = Set<Int>()
        for path in state.directories.keys.sorted() {
            let directory = state.directories[path]!
            for name in directory.current.keys.sorted() {
                let number = directory.current[name]!
                if state.inodes[number] != nil, seen.insert(number).inserted { ordered.append(number) }
            }
        }
        for number in state.inodes.keys.sorted() where !seen.contains(number) { ordered.append(number) }
        return ordered
    }

    /// The directory entry changes in `directory` not yet made durable by an `fsync` of it.
    public func unsyncedEntryChanges(in directory: String) -> Int {
        state.withLock { $0.directories[directory]?.pending.count ?? 0 }
    }

    /// The renames within `directory` not yet made durable by an `fsync` of
    /// it, oldest first: what a power cut may undo.
    public func unsyncedRenames(in directory: String) -> [(from: String, to: String)] {
        state.withLock { state in
            (state.directories[directory]?.pending ?? []).compactMap { change in
                if case .move(let from, let to, _) = change { return (from, to) }
                return nil
            }
        }
    }

    /// Whether the machine is frozen (see ``freeze(afterCalls:)``) and its
    /// calls fail now.
    public var isFrozen: Bool { state.withLock { $0.freezeAfter == 0 } }

    /// Freezes the machine after `calls` more system calls: from then on every
    /// call fails with `EIO` (nothing more reaches the disk, nothing more is
    /// acknowledged), until ``crash(_:)``. This is how a test stops a store at
    /// an exact point (inside a group commit, between a checkpoint's rename
    /// and its directory sync) and then cuts the power.
    ///
    /// ```swift
    /// disk.freeze(afterCalls: 17)
    /// _ = try? await store.create("pin", fields: [:])   // may or may not be acknowledged
    /// disk.crash(.powerLoss(using: &random))
    /// ```
    public func freeze(afterCalls calls: Int) {
        state.withLock { $0.freezeAfter = max(0, calls) }
    }

    /// System calls made so far (every call, failed or not): count a
    /// workload's calls once, then pick crash points among them.
    public var callCount: Int { state.withLock { $0.calls } }

    /// Counts a call; throws `EIO` once the machine is frozen, or when the
    /// call comes from a process of an earlier boot.
    private static func enter(_ state: inout State, _ call: SystemCall, boot: Int?) throws(SystemError) {
        state.calls += 1
        if let boot, boot != state.boot { throw SystemError(call: call, code: .ioError) }
        guard let remaining = state.freezeAfter else { return }
        if remaining == 0 { throw SystemError(call: call, code: .ioError) }
        state.freezeAfter = remaining - 1
    }

    /// Crashes performed so far.
    public var crashes: Int { state.withLock { $0.crashes } }

    /// Successful `fdatasync`/`fsync` calls so far.
    public var syncCount: Int { state.withLock { $0.syncs } }

    /// The current content of the file at `path` (what a read sees now), or `nil`.
    ///
    /// ```swift
    /// let bytes = disk.contents(of: "/device/pins.journal")
    /// ```
    public func contents(of path: String) -> [UInt8]? {
        state.withLock { state in
            let (parent, name) = Self.split(path)
            guard let number = state.directories[parent]?.current[name] else { return nil }
            return state.inodes[number]?.current
        }
    }

    /// Replaces (or creates, durably) the file at `path` with `bytes`: for
    /// planting a damaged journal, say.
    public func setContents(of path: String, to bytes: [UInt8]) {
        state.withLock { state in
            let (parent, name) = Self.split(path)
            var directory = state.directories[parent] ?? Directory()
            let number: Int
            if let existing = directory.current[name] {
                number = existing
            } else {
                number = state.nextInode
                state.nextInode += 1
                directory.current[name] = number
                directory.durable[name] = number
            }
            state.directories[parent] = directory
            state.inodes[number] = Inode(durable: bytes, current: bytes, touched: [], lockedBy: nil)
        }
    }

    /// The names of the files in `directory`, sorted.
    public func files(in directory: String) -> [String] {
        state.withLock { $0.directories[directory]?.current.keys.sorted() ?? [] }
    }

    /// The number of bytes of the file at `path` that a power cut could
    /// leave different from what a read sees now: bytes whose durable and
    /// current values differ, and bytes present in only one of the two
    /// lengths (0 when it is all durable or missing).
    public func unsyncedBytes(of path: String) -> Int {
        state.withLock { state in
            let (parent, name) = Self.split(path)
            guard let number = state.directories[parent]?.current[name], let inode = state.inodes[number] else { return 0 }
            let shorter = min(inode.durable.count, inode.current.count)
            let longer = max(inode.durable.count, inode.current.count)
            var count = 0
            for sector in inode.touched {
                let lower = sector * Self.sectorSize
                for offset in lower..<min(lower + Self.sectorSize, longer)
                where offset >= shorter || inode.durable[offset] != inode.current[offset] { count += 1 }
            }
            return count
        }
    }

    // MARK: SystemCalls

    package func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        return try open(path, options, mode, boot: nil)
    }

    package func close(_ fd: FileDescriptor) throws(SystemError) {
        try close(fd, boot: nil)
    }

    package func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        return try pread(fd, into: buffer, at: offset, boot: nil)
    }

    package func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        return try pwrite(fd, from: buffer, at: offset, boot: nil)
    }

    package func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) {
        try ftruncate(fd, length, boot: nil)
    }

    package func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 {
        return try fileSize(fd, boot: nil)
    }

    package func rename(_ from: String, _ to: String) throws(SystemError) {
        try rename(from, to, boot: nil)
    }

    package func unlink(_ path: String) throws(SystemError) {
        try unlink(path, boot: nil)
    }

    package func link(_ existing: String, _ new: String) throws(SystemError) {
        try link(existing, new, boot: nil)
    }

    package func lockExclusive(_ fd: FileDescriptor) throws(SystemError) {
        try lockExclusive(fd, boot: nil)
    }

    package func makeDirectory(_ path: String) throws(SystemError) {
        try makeDirectory(path, boot: nil)
    }

    package func directoryEntries(_ path: String) throws(SystemError) -> [String]? {
        try directoryEntries(path, boot: nil)
    }

    package func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        try sync(fd, call: .fdatasync, boot: nil)
    }

    package func fsync(_ fd: FileDescriptor) throws(SystemError) {
        try sync(fd, call: .fsync, boot: nil)
    }

    // MARK: The calls, of any process (`boot == nil`) or of one boot

    func open(_ path: String, _ options: OpenOptions, _ mode: UInt32, boot: Int?) throws(SystemError) -> FileDescriptor {
        try state.withLock { (state) throws(SystemError) -> FileDescriptor in
            try Self.enter(&state, .open, boot: boot)
            let fd = state.nextDescriptor
            if options.contains(.directory) {
                guard Self.isDirectory(path, in: state) else { throw SystemError(call: .open, code: .noSuchFile, path: path) }
                state.nextDescriptor += 1
                state.descriptors[fd] = OpenFile(inode: nil, directory: path, writable: false)
                return FileDescriptor(rawValue: fd)
            }
            let (parent, name) = Self.split(path)
            if state.directories[parent] == nil && !Self.isDirectory(parent, in: state) {
                throw SystemError(call: .open, code: .noSuchFile, path: path)
            }
            var directory = state.directories[parent] ?? Directory()
            var number = directory.current[name]
            if number != nil && options.contains(.create) && options.contains(.exclusive) {
                throw SystemError(call: .open, code: .fileExists, path: path)
            }
            if number == nil {
                guard options.contains(.create) else { throw SystemError(call: .open, code: .noSuchFile, path: path) }
                let created = state.nextInode
                state.nextInode += 1
                state.inodes[created] = Inode()
                directory.current[name] = created
                directory.pending.append(.link(name: name, inode: created))
                state.directories[parent] = directory
                number = created
            }
            let writable = options.contains(.readWrite)
            if options.contains(.truncate) && writable {
                Self.truncate(&state.inodes[number!]!, to: 0)
            }
            state.nextDescriptor += 1
            state.descriptors[fd] = OpenFile(inode: number, directory: nil, writable: writable)
            return FileDescriptor(rawValue: fd)
        }
    }

    func close(_ fd: FileDescriptor, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .close, boot: boot)
            guard let file = state.descriptors.removeValue(forKey: fd.rawValue) else { throw SystemError(call: .close, code: .badDescriptor) }
            if let number = file.inode, state.inodes[number]?.lockedBy == fd.rawValue { state.inodes[number]!.lockedBy = nil }
        }
    }

    func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, boot: Int?) throws(SystemError) -> Int {
        try state.withLock { (state) throws(SystemError) -> Int in
            try Self.enter(&state, .pread, boot: boot)
            let number = try Self.file(fd, in: state, call: .pread)
            guard offset >= 0 else { throw SystemError(call: .pread, code: .invalidArgument) }
            let content = state.inodes[number]!.current
            guard offset < content.count, buffer.count > 0 else { return 0 }
            let count = min(buffer.count, content.count - Int(offset))
            content.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress! + Int(offset), byteCount: count)
            }
            return count
        }
    }

    func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64, boot: Int?) throws(SystemError) -> Int {
        try state.withLock { (state) throws(SystemError) -> Int in
            try Self.enter(&state, .pwrite, boot: boot)
            let number = try Self.file(fd, in: state, call: .pwrite)
            guard state.descriptors[fd.rawValue]!.writable else { throw SystemError(call: .pwrite, code: .badDescriptor) }
            guard offset >= 0 else { throw SystemError(call: .pwrite, code: .invalidArgument) }
            guard buffer.count > 0 else { return 0 }
            if let capacity = state.capacity {
                let others = state.inodes.filter { $0.key != number }.reduce(0) { $0 + min($1.value.allocated, $1.value.current.count) }
                let after = max(min(state.inodes[number]!.allocated, state.inodes[number]!.current.count), Int(offset) + buffer.count)
                if others + after > capacity { throw SystemError(call: .pwrite, code: .noSpace) }
            }
            let bytes = Array(buffer)
            Self.write(bytes, at: Int(offset), into: &state.inodes[number]!)
            state.inodes[number]!.allocated = max(state.inodes[number]!.allocated, Int(offset) + bytes.count)
            return bytes.count
        }
    }

    func sync(_ fd: FileDescriptor, call: SystemCall, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, call, boot: boot)
            guard let file = state.descriptors[fd.rawValue] else { throw SystemError(call: call, code: .badDescriptor) }
            if let path = file.directory {
                var directory = state.directories[path] ?? Directory()
                directory.durable = directory.current
                directory.pending = []
                state.directories[path] = directory
            } else if let number = file.inode {
                state.inodes[number]!.durable = state.inodes[number]!.current
                state.inodes[number]!.touched = []
            }
            state.syncs += 1
        }
    }

    func ftruncate(_ fd: FileDescriptor, _ length: Int64, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .ftruncate, boot: boot)
            let number = try Self.file(fd, in: state, call: .ftruncate)
            guard state.descriptors[fd.rawValue]!.writable else { throw SystemError(call: .ftruncate, code: .badDescriptor) }
            guard length >= 0 else { throw SystemError(call: .ftruncate, code: .invalidArgument) }
            Self.truncate(&state.inodes[number]!, to: Int(length))
        }
    }

    func fileSize(_ fd: FileDescriptor, boot: Int?) throws(SystemError) -> Int64 {
        try state.withLock { (state) throws(SystemError) -> Int64 in
            try Self.enter(&state, .fstat, boot: boot)
            let number = try Self.file(fd, in: state, call: .fstat)
            return Int64(state.inodes[number]!.current.count)
        }
    }

    func rename(_ from: String, _ to: String, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .rename, boot: boot)
            let (fromParent, fromName) = Self.split(from)
            let (toParent, toName) = Self.split(to)
            guard let number = state.directories[fromParent]?.current[fromName] else { throw SystemError(call: .rename, code: .noSuchFile, path: from) }
            guard state.directories[toParent] != nil || Self.isDirectory(toParent, in: state) else {
                throw SystemError(call: .rename, code: .noSuchFile, path: to)
            }
            if fromParent == toParent {
                state.directories[fromParent]!.current[fromName] = nil
                state.directories[fromParent]!.current[toName] = number
                state.directories[fromParent]!.pending.append(.move(from: fromName, to: toName, inode: number))
                return
            }
            state.directories[fromParent]!.current[fromName] = nil
            state.directories[fromParent]!.pending.append(.unlink(name: fromName))
            var target = state.directories[toParent] ?? Directory()
            target.current[toName] = number
            target.pending.append(.link(name: toName, inode: number))
            state.directories[toParent] = target
        }
    }

    /// A second name for a file: a new entry in the new name's directory, unsynced until that directory is.
    func link(_ existing: String, _ new: String, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .link, boot: boot)
            let (fromParent, fromName) = Self.split(existing)
            let (toParent, toName) = Self.split(new)
            guard let number = state.directories[fromParent]?.current[fromName] else { throw SystemError(call: .link, code: .noSuchFile, path: existing) }
            guard state.directories[toParent] != nil || Self.isDirectory(toParent, in: state) else {
                throw SystemError(call: .link, code: .noSuchFile, path: new)
            }
            if state.directories[toParent]?.current[toName] != nil { throw SystemError(call: .link, code: .fileExists, path: new) }
            var target = state.directories[toParent] ?? Directory()
            target.current[toName] = number
            target.pending.append(.link(name: toName, inode: number))
            state.directories[toParent] = target
        }
    }

    func unlink(_ path: String, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .unlink, boot: boot)
            let (parent, name) = Self.split(path)
            guard state.directories[parent]?.current[name] != nil else { throw SystemError(call: .unlink, code: .noSuchFile, path: path) }
            state.directories[parent]!.current[name] = nil
            state.directories[parent]!.pending.append(.unlink(name: name))
        }
    }

    /// Makes a directory. The simulated disk keeps a new directory at once
    /// (a real one needs its parent synced; callers sync it, which this
    /// disk counts as a call like any other).
    func makeDirectory(_ path: String, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .mkdir, boot: boot)
            if Self.isDirectory(path, in: state) { throw SystemError(call: .mkdir, code: .fileExists, path: path) }
            let (parent, name) = Self.split(path)
            if state.directories[parent]?.current[name] != nil { throw SystemError(call: .mkdir, code: .fileExists, path: path) }
            guard Self.isDirectory(parent, in: state) else { throw SystemError(call: .mkdir, code: .noSuchFile, path: path) }
            state.directories[path] = Directory()
        }
    }

    /// The names of the files in a directory as a read sees them now, sorted; `ENOENT` for no directory.
    func directoryEntries(_ path: String, boot: Int?) throws(SystemError) -> [String]? {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .open, boot: boot)
            guard Self.isDirectory(path, in: state) else { throw SystemError(call: .open, code: .noSuchFile, path: path) }
            let prefix = path.hasSuffix("/") ? path : path + "/"
            var names = Set(state.directories[path]?.current.keys.map { $0 } ?? [])
            // Subdirectories are named by their paths.
            for other in state.directories.keys where other.hasPrefix(prefix) {
                let rest = other.dropFirst(prefix.count)
                if let first = rest.split(separator: "/").first { names.insert(String(first)) }
            }
            return names.sorted()
        }
    }

    func lockExclusive(_ fd: FileDescriptor, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .flock, boot: boot)
            let number = try Self.file(fd, in: state, call: .flock)
            if let holder = state.inodes[number]!.lockedBy, holder != fd.rawValue { throw SystemError(call: .flock, code: .wouldBlock) }
            state.inodes[number]!.lockedBy = fd.rawValue
        }
    }

    // MARK: Internals

    private static func file(_ fd: FileDescriptor, in state: State, call: SystemCall) throws(SystemError) -> Int {
        guard let file = state.descriptors[fd.rawValue] else { throw SystemError(call: call, code: .badDescriptor) }
        guard let number = file.inode else { throw SystemError(call: call, code: .isDirectory) }
        return number
    }

    /// A directory exists once it has (or had) an entry, or is an ancestor of one; `/` and `.` always do.
    private static func isDirectory(_ path: String, in state: State) -> Bool {
        if path == "/" || path == "." || state.directories[path] != nil { return true }
        let prefix = path.hasSuffix("/") ? path : path + "/"
        return state.directories.keys.contains { $0.hasPrefix(prefix) }
    }

    /// Makes `path` a directory (with its ancestors), so files can be created in it.
    ///
    /// ```swift
    /// disk.createDirectory("/device")
    /// ```
    public func createDirectory(_ path: String) {
        state.withLock { state in
            if state.directories[path] == nil { state.directories[path] = Directory() }
        }
    }

    /// `(directory, name)`: `/a/b.journal` → `("/a", "b.journal")`; a bare name is in `.`.
    private static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let parent = slash == path.startIndex ? "/" : String(path[..<slash])
        return (parent, String(path[path.index(after: slash)...]))
    }

    /// Writes `bytes` at `offset` of the current content (zero-filling a gap past the end).
    private static func write(_ bytes: [UInt8], at offset: Int, into inode: inout Inode) {
        touch(&inode, min(offset, inode.current.count)..<(offset + bytes.count))
        if inode.current.count < offset + bytes.count {
            inode.current.append(contentsOf: repeatElement(0, count: offset + bytes.count - inode.current.count))
        }
        inode.current.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
    }

    /// Cuts or zero-extends the current content to `length`.
    private static func truncate(_ inode: inout Inode, to length: Int) {
        let count = inode.current.count
        touch(&inode, min(length, count)..<max(length, count))
        if count > length {
            inode.current.removeSubrange(length...)
        } else {
            inode.current.append(contentsOf: repeatElement(0, count: length - count))
        }
    }

    private static func apply(_ change: EntryChange, to entries: inout [String: Int]) {
        switch change {
        case .link(let name, let inode): entries[name] = inode
        case .unlink(let name): entries[name] = nil
        case .move(let from, let to, let inode):
            entries[from] = nil
            entries[to] = inode
        }
    }
}
