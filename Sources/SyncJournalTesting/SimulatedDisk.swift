#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import SyncJournalCore

/// An in-memory file system with a disk cache that a test can cut the power
/// to: the seam a power-loss test or the simulator gives a ``LocalStore`` or a
/// ``JournalWriter`` instead of the real system calls.
///
/// Every file has a **durable** content (what survives a crash for certain)
/// and the writes and truncations made since its last `fdatasync`/`fsync`.
/// Every directory has its durable entries and the creations, renames and
/// unlinks made since its last `fsync`. ``crash(_:)`` models what a power cut
/// leaves: per file, the unsynced changes are kept, lost, or cut **at any
/// byte** of the stream of changes (a torn write), and per directory, a prefix
/// of the unsynced entry changes survives (so a rename not followed by a
/// directory sync may be undone). Then every open descriptor is dead (any call
/// on it fails with `EBADF`, as the process that held it is gone) and every
/// lock is released.
///
/// ```swift
/// let disk = SimulatedDisk()
/// disk.createDirectory("/device")
/// let store = try await LocalStore.open(path: "/device/pins.journal", options: .init(system: disk))
/// try await store.create("pin", fields: ["name": .string("Cafe")])   // durable: it returned
/// var random = SeededGenerator(seed: 7)
/// disk.crash(.powerLoss(using: &random))                              // the old store is dead
/// let reopened = try await LocalStore.open(path: "/device/pins.journal", options: .init(system: disk))
/// ```
public final class SimulatedDisk: SystemCalls {
    /// What a crash does to changes not yet synced.
    public enum CrashMode: Sendable, Hashable {
        /// The process dies, the machine does not (`kill -9`): the page cache
        /// survives, so every write and every directory change is kept.
        case processCrash
        /// The power is cut and nothing unsynced reaches the disk.
        case loseUnsynced
        /// The power is cut: for each file, the first `keptBytes[i]` bytes of
        /// its unsynced change stream survive (a write may be cut inside);
        /// for each directory, the first `keptEntries[j]` unsynced entry
        /// changes survive. Files are taken in the order of their current
        /// paths (files no name reaches last), directories in path order;
        /// missing values mean "keep nothing".
        case cut(keptBytes: [Int], keptEntries: [Int])

        /// A power cut with every choice drawn from `generator`: each file's
        /// unsynced stream is kept whole, lost, or torn at a uniformly random
        /// byte (a third each), and each directory keeps a random prefix of its
        /// unsynced entry changes.
        public static func powerLoss<G: RandomNumberGenerator>(using generator: inout G) -> CrashMode {
            .random(seed: generator.next())
        }

        /// See ``powerLoss(using:)``; the choices come from `seed`.
        case random(seed: UInt64)
    }

    /// One unsynced change to a file's content.
    private enum Change {
        case write(offset: Int, bytes: [UInt8])
        case truncate(length: Int)

        /// Bytes this change counts for in a torn-stream cut (a truncation is one indivisible step).
        var weight: Int {
            switch self {
            case .write(_, let bytes): return bytes.count
            case .truncate: return 1
            }
        }
    }

    /// A file's content: the durable part and what was done since the last sync.
    private struct Inode {
        var durable: [UInt8] = []
        var pending: [Change] = []
        var current: [UInt8] = []
        var lockedBy: Int32?
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
    public var lockNamespace: String { identity + "-boot-\(state.withLock { $0.boot })/" }

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
    /// let store = try await LocalStore.open(path: path, options: .init(system: disk.process()))
    /// disk.crash(.powerLoss(using: &random))   // the store may run on; its calls all fail
    /// let reopened = try await LocalStore.open(path: path, options: .init(system: disk.process()))
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

        public var lockNamespace: String { disk.identity + "-boot-\(boot)/" }

        public func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
            try disk.open(path, options, mode, boot: boot)
        }
        public func close(_ fd: FileDescriptor) throws(SystemError) { try disk.close(fd, boot: boot) }
        public func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
            try disk.pread(fd, into: buffer, at: offset, boot: boot)
        }
        public func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
            try disk.pwrite(fd, from: buffer, at: offset, boot: boot)
        }
        public func fdatasync(_ fd: FileDescriptor) throws(SystemError) { try disk.sync(fd, call: .fdatasync, boot: boot) }
        public func fsync(_ fd: FileDescriptor) throws(SystemError) { try disk.sync(fd, call: .fsync, boot: boot) }
        public func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) { try disk.ftruncate(fd, length, boot: boot) }
        public func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 { try disk.fileSize(fd, boot: boot) }
        public func rename(_ from: String, _ to: String) throws(SystemError) { try disk.rename(from, to, boot: boot) }
        public func unlink(_ path: String) throws(SystemError) { try disk.unlink(path, boot: boot) }
        public func lockExclusive(_ fd: FileDescriptor) throws(SystemError) { try disk.lockExclusive(fd, boot: boot) }
    }

    // MARK: Inspection and crashes

    /// What a crash did to the changes that were not yet durable.
    public struct CrashReport: Sendable, Hashable, CustomStringConvertible {
        /// Files that had unsynced changes.
        public var filesWithUnsyncedChanges = 0
        /// Files whose unsynced change stream was cut inside (neither all kept nor all lost).
        public var filesTorn = 0
        /// Unsynced bytes (a truncation counts one) that did not survive.
        public var bytesLost = 0
        /// Unsynced bytes that did survive.
        public var bytesKept = 0
        /// Unsynced directory entry changes (creations, renames, unlinks) that did not survive.
        public var entryChangesUndone = 0
        /// Unsynced directory entry changes that did survive.
        public var entryChangesKept = 0
        /// Unsynced renames that were undone (the old name is back).
        public var renamesUndone = 0
        /// Unsynced renames that survived.
        public var renamesKept = 0

        public var description: String {
            "\(filesWithUnsyncedChanges) files with unsynced changes (\(filesTorn) torn), \(bytesKept) unsynced bytes kept, \(bytesLost) lost, "
                + "\(entryChangesKept) entry changes kept (\(renamesKept) renames), \(entryChangesUndone) undone (\(renamesUndone) renames)"
        }
    }

    /// Crashes the machine (see ``CrashMode``): unsynced changes are resolved
    /// as the mode says, every descriptor dies and every lock is released.
    /// Returns what was kept and lost.
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
            var keptBytes: [Int] = []
            var keptEntries: [Int] = []
            var keepAll = false
            var random: SeededGenerator?
            switch mode {
            case .processCrash:
                keepAll = true
            case .loseUnsynced:
                break
            case .cut(let bytes, let entries):
                keptBytes = bytes
                keptEntries = entries
            case .random(let seed):
                random = SeededGenerator(seed: seed)
            }
            for (index, number) in Self.inodesInPathOrder(state).enumerated() {
                var inode = state.inodes[number]!
                let total = inode.pending.reduce(0) { $0 + $1.weight }
                var keep = index < keptBytes.count ? keptBytes[index] : 0
                if keepAll { keep = total }
                if random != nil {
                    switch UInt8.random(in: 0..<3, using: &random!) {
                    case 0: keep = 0
                    case 1: keep = total
                    default: keep = total == 0 ? 0 : Int.random(in: 0...total, using: &random!)
                    }
                }
                keep = min(max(0, keep), total)
                if total > 0 {
                    report.filesWithUnsyncedChanges += 1
                    if keep > 0 && keep < total { report.filesTorn += 1 }
                    report.bytesKept += keep
                    report.bytesLost += total - keep
                }
                var content = inode.durable
                var budget = keep
                for change in inode.pending where budget > 0 {
                    switch change {
                    case .write(let offset, let bytes):
                        let part = Array(bytes.prefix(budget))
                        Self.write(part, at: offset, into: &content)
                        budget -= part.count
                    case .truncate(let length):
                        Self.truncate(&content, to: length)
                        budget -= 1
                    }
                }
                inode.durable = content
                inode.current = content
                inode.pending = []
                inode.lockedBy = nil
                state.inodes[number] = inode
            }
            for (index, path) in state.directories.keys.sorted().enumerated() {
                var directory = state.directories[path]!
                var keep = index < keptEntries.count ? keptEntries[index] : 0
                if keepAll { keep = directory.pending.count }
                if random != nil { keep = Int.random(in: 0...directory.pending.count, using: &random!) }
                keep = min(max(0, keep), directory.pending.count)
                var entries = directory.durable
                for change in directory.pending.prefix(keep) { Self.apply(change, to: &entries) }
                report.entryChangesKept += keep
                report.entryChangesUndone += directory.pending.count - keep
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
        if let boot, boot != state.boot { throw SystemError(call: call, errno: EIO) }
        guard let remaining = state.freezeAfter else { return }
        if remaining == 0 { throw SystemError(call: call, errno: EIO) }
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
            state.inodes[number] = Inode(durable: bytes, pending: [], current: bytes, lockedBy: nil)
        }
    }

    /// The names of the files in `directory`, sorted.
    public func files(in directory: String) -> [String] {
        state.withLock { $0.directories[directory]?.current.keys.sorted() ?? [] }
    }

    /// The number of unsynced bytes of the file at `path` (0 when it is all durable or missing).
    public func unsyncedBytes(of path: String) -> Int {
        state.withLock { state in
            let (parent, name) = Self.split(path)
            guard let number = state.directories[parent]?.current[name], let inode = state.inodes[number] else { return 0 }
            return inode.pending.reduce(0) { $0 + $1.weight }
        }
    }

    // MARK: SystemCalls

    public func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        return try open(path, options, mode, boot: nil)
    }

    public func close(_ fd: FileDescriptor) throws(SystemError) {
        try close(fd, boot: nil)
    }

    public func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        return try pread(fd, into: buffer, at: offset, boot: nil)
    }

    public func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        return try pwrite(fd, from: buffer, at: offset, boot: nil)
    }

    public func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) {
        try ftruncate(fd, length, boot: nil)
    }

    public func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 {
        return try fileSize(fd, boot: nil)
    }

    public func rename(_ from: String, _ to: String) throws(SystemError) {
        try rename(from, to, boot: nil)
    }

    public func unlink(_ path: String) throws(SystemError) {
        try unlink(path, boot: nil)
    }

    public func lockExclusive(_ fd: FileDescriptor) throws(SystemError) {
        try lockExclusive(fd, boot: nil)
    }

    public func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        try sync(fd, call: .fdatasync, boot: nil)
    }

    public func fsync(_ fd: FileDescriptor) throws(SystemError) {
        try sync(fd, call: .fsync, boot: nil)
    }

    // MARK: The calls, of any process (`boot == nil`) or of one boot

    func open(_ path: String, _ options: OpenOptions, _ mode: UInt32, boot: Int?) throws(SystemError) -> FileDescriptor {
        try state.withLock { (state) throws(SystemError) -> FileDescriptor in
            try Self.enter(&state, .open, boot: boot)
            let fd = state.nextDescriptor
            if options.contains(.directory) {
                guard Self.isDirectory(path, in: state) else { throw SystemError(call: .open, errno: ENOENT, path: path) }
                state.nextDescriptor += 1
                state.descriptors[fd] = OpenFile(inode: nil, directory: path, writable: false)
                return FileDescriptor(rawValue: fd)
            }
            let (parent, name) = Self.split(path)
            if state.directories[parent] == nil && !Self.isDirectory(parent, in: state) {
                throw SystemError(call: .open, errno: ENOENT, path: path)
            }
            var directory = state.directories[parent] ?? Directory()
            var number = directory.current[name]
            if number != nil && options.contains(.create) && options.contains(.exclusive) {
                throw SystemError(call: .open, errno: EEXIST, path: path)
            }
            if number == nil {
                guard options.contains(.create) else { throw SystemError(call: .open, errno: ENOENT, path: path) }
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
                state.inodes[number!]!.pending.append(.truncate(length: 0))
                state.inodes[number!]!.current = []
            }
            state.nextDescriptor += 1
            state.descriptors[fd] = OpenFile(inode: number, directory: nil, writable: writable)
            return FileDescriptor(rawValue: fd)
        }
    }

    func close(_ fd: FileDescriptor, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .close, boot: boot)
            guard let file = state.descriptors.removeValue(forKey: fd.rawValue) else { throw SystemError(call: .close, errno: EBADF) }
            if let number = file.inode, state.inodes[number]?.lockedBy == fd.rawValue { state.inodes[number]!.lockedBy = nil }
        }
    }

    func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, boot: Int?) throws(SystemError) -> Int {
        try state.withLock { (state) throws(SystemError) -> Int in
            try Self.enter(&state, .pread, boot: boot)
            let number = try Self.file(fd, in: state, call: .pread)
            guard offset >= 0 else { throw SystemError(call: .pread, errno: EINVAL) }
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
            guard state.descriptors[fd.rawValue]!.writable else { throw SystemError(call: .pwrite, errno: EBADF) }
            guard offset >= 0 else { throw SystemError(call: .pwrite, errno: EINVAL) }
            guard buffer.count > 0 else { return 0 }
            if let capacity = state.capacity {
                let others = state.inodes.filter { $0.key != number }.reduce(0) { $0 + $1.value.current.count }
                let after = max(state.inodes[number]!.current.count, Int(offset) + buffer.count)
                if others + after > capacity { throw SystemError(call: .pwrite, errno: ENOSPC) }
            }
            let bytes = Array(buffer)
            state.inodes[number]!.pending.append(.write(offset: Int(offset), bytes: bytes))
            Self.write(bytes, at: Int(offset), into: &state.inodes[number]!.current)
            return bytes.count
        }
    }

    func sync(_ fd: FileDescriptor, call: SystemCall, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, call, boot: boot)
            guard let file = state.descriptors[fd.rawValue] else { throw SystemError(call: call, errno: EBADF) }
            if let path = file.directory {
                var directory = state.directories[path] ?? Directory()
                directory.durable = directory.current
                directory.pending = []
                state.directories[path] = directory
            } else if let number = file.inode {
                state.inodes[number]!.durable = state.inodes[number]!.current
                state.inodes[number]!.pending = []
            }
            state.syncs += 1
        }
    }

    func ftruncate(_ fd: FileDescriptor, _ length: Int64, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .ftruncate, boot: boot)
            let number = try Self.file(fd, in: state, call: .ftruncate)
            guard state.descriptors[fd.rawValue]!.writable else { throw SystemError(call: .ftruncate, errno: EBADF) }
            guard length >= 0 else { throw SystemError(call: .ftruncate, errno: EINVAL) }
            state.inodes[number]!.pending.append(.truncate(length: Int(length)))
            Self.truncate(&state.inodes[number]!.current, to: Int(length))
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
            guard let number = state.directories[fromParent]?.current[fromName] else { throw SystemError(call: .rename, errno: ENOENT, path: from) }
            guard state.directories[toParent] != nil || Self.isDirectory(toParent, in: state) else {
                throw SystemError(call: .rename, errno: ENOENT, path: to)
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

    func unlink(_ path: String, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .unlink, boot: boot)
            let (parent, name) = Self.split(path)
            guard state.directories[parent]?.current[name] != nil else { throw SystemError(call: .unlink, errno: ENOENT, path: path) }
            state.directories[parent]!.current[name] = nil
            state.directories[parent]!.pending.append(.unlink(name: name))
        }
    }

    func lockExclusive(_ fd: FileDescriptor, boot: Int?) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            try Self.enter(&state, .flock, boot: boot)
            let number = try Self.file(fd, in: state, call: .flock)
            if let holder = state.inodes[number]!.lockedBy, holder != fd.rawValue { throw SystemError(call: .flock, errno: EAGAIN) }
            state.inodes[number]!.lockedBy = fd.rawValue
        }
    }

    // MARK: Internals

    private static func file(_ fd: FileDescriptor, in state: State, call: SystemCall) throws(SystemError) -> Int {
        guard let file = state.descriptors[fd.rawValue] else { throw SystemError(call: call, errno: EBADF) }
        guard let number = file.inode else { throw SystemError(call: call, errno: EISDIR) }
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

    private static func write(_ bytes: [UInt8], at offset: Int, into content: inout [UInt8]) {
        if content.count < offset + bytes.count { content.append(contentsOf: repeatElement(0, count: offset + bytes.count - content.count)) }
        content.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
    }

    private static func truncate(_ content: inout [UInt8], to length: Int) {
        if content.count > length {
            content.removeSubrange(length...)
        } else {
            content.append(contentsOf: repeatElement(0, count: length - content.count))
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
