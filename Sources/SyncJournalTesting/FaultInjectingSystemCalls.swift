import SyncJournalPlatform
import SyncJournalCore

/// A ``SystemCalls`` layer that passes every call to another one (the real
/// ``PosixSystemCalls`` by default) and lets a test make chosen calls fail,
/// transfer fewer bytes, or tear a write, while counting every call by kind
/// and file.
///
/// ```swift
/// let faults = FaultInjectingSystemCalls()
/// let store = try await LocalStore.open(path: path, options: .init(fileSystem: faults.fileSystem))
/// faults.inject(.ioError, into: .fdatasync, on: .path(path))
/// // the next edit fails and the store is failed ...
/// #expect(faults.callCount(.fdatasync, on: .path(path)) == 1)   // ... and the sync never retried
/// ```
///
/// The injector remembers the path every descriptor was opened with, so rules
/// and counts can name a file even for calls that only take a descriptor.
/// When several rules match one call, each counts it, and the first one
/// injected whose schedule selects the call decides what happens. The type is
/// thread-safe: the writer's queue and a test may call it concurrently.
public final class FaultInjectingSystemCalls: SystemCallsLayer, Sendable {
    /// The layer that carries out the calls that are not failed.
    package let base: any SystemCalls

    private struct InstalledRule {
        var id: FaultRuleID
        var rule: FaultRule
        /// Matching calls seen since the rule was injected.
        var seen = 0
        /// Times the rule fired.
        var fired = 0
    }

    /// One kind of call on one file, for the counts.
    private struct CallSite: Hashable {
        var call: SystemCall
        var paths: [String]
        var descriptor: FileDescriptor?
    }

    private struct State {
        var nextRuleNumber = 1
        var rules: [InstalledRule] = []
        /// Rules removed or spent keep their firing count here.
        var firedByRule: [FaultRuleID: Int] = [:]
        var descriptors: [FileDescriptor: String] = [:]
        var counts: [CallSite: Int] = [:]
    }

    private let state = Mutex(State())

    /// An injector in front of `base` (the machine's file system by default), with no faults yet.
    public convenience init(wrapping base: FileSystem = .system) {
        self.init(wrapping: base.calls)
    }

    /// An injector in front of these system calls, with no faults yet.
    package init(wrapping base: any SystemCalls) {
        self.base = base
    }

    /// This injector as a file system to open a store on.
    public var fileSystem: FileSystem { FileSystem(self) }

    // MARK: Rules

    /// Adds `rule`; it starts counting matching calls from now.
    @discardableResult
    public func inject(_ rule: FaultRule) -> FaultRuleID {
        state.withLock { state in
            let id = FaultRuleID(rawValue: state.nextRuleNumber)
            state.nextRuleNumber += 1
            state.rules.append(InstalledRule(id: id, rule: rule))
            state.firedByRule[id] = 0
            return id
        }
    }

    /// Makes `fault` happen on the calls of kind `call` on `target` that
    /// `schedule` selects (by default the next one only).
    @discardableResult
    public func inject(_ fault: InjectedFault, into call: SystemCall, on target: TargetFile = .any,
                       when schedule: FaultSchedule = .nthCall(1)) -> FaultRuleID {
        inject(FaultRule(call: call, target: target, schedule: schedule, fault: fault))
    }

    /// Removes one rule; calls it would have selected pass through again.
    public func remove(_ id: FaultRuleID) {
        state.withLock { state in state.rules.removeAll { $0.id == id } }
    }

    /// Removes every rule. Call counts are kept.
    public func removeAllFaults() {
        state.withLock { state in state.rules.removeAll() }
    }

    /// The rules in force, in the order they were injected.
    public var rules: [FaultRule] {
        state.withLock { state in state.rules.map(\.rule) }
    }

    /// How many calls the rule `id` has failed or shortened (also after it was removed).
    public func timesFired(_ id: FaultRuleID) -> Int {
        state.withLock { state in state.firedByRule[id] ?? 0 }
    }

    // MARK: Counts and descriptors

    /// How many calls of kind `call` were made on `target`, failed ones
    /// included, since the injector was created or ``resetCallCounts()``.
    public func callCount(_ call: SystemCall, on target: TargetFile = .any) -> Int {
        state.withLock { state in
            state.counts.reduce(0) { total, entry in
                guard entry.key.call == call,
                      target.matches(paths: entry.key.paths) else { return total }
                return total + entry.value
            }
        }
    }

    /// Calls made so far, per kind (kinds never called are absent).
    public var callCounts: [SystemCall: Int] {
        state.withLock { state in
            state.counts.reduce(into: [:]) { totals, entry in totals[entry.key.call, default: 0] += entry.value }
        }
    }

    /// Sets every call count back to zero (rules keep their own counts).
    public func resetCallCounts() {
        state.withLock { state in state.counts.removeAll() }
    }

    /// The path `fd` was opened with, while it is open.
    package func path(of fd: FileDescriptor) -> String? {
        state.withLock { state in state.descriptors[fd] }
    }

    /// Every descriptor opened through the injector and not yet closed, with its path.
    package var openDescriptors: [FileDescriptor: String] {
        state.withLock { state in state.descriptors }
    }

    // MARK: Dispatch

    /// Counts one call and returns the fault to inject into it, if any.
    private func begin(_ call: SystemCall, paths: [String] = [], descriptor: FileDescriptor? = nil) -> InjectedFault? {
        state.withLock { state in
            var paths = paths
            if let descriptor, let path = state.descriptors[descriptor] { paths.append(path) }
            state.counts[CallSite(call: call, paths: paths, descriptor: descriptor), default: 0] += 1
            var chosen: InjectedFault?
            for index in state.rules.indices {
                let rule = state.rules[index].rule
                guard rule.call == call, rule.target.matches(paths: paths) else { continue }
                state.rules[index].seen += 1
                if chosen == nil && rule.schedule.fires(onCall: state.rules[index].seen) {
                    state.rules[index].fired += 1
                    state.firedByRule[state.rules[index].id, default: 0] += 1
                    chosen = rule.fault
                }
            }
            return chosen
        }
    }

    /// The error an injected failure throws, shaped as ``PosixSystemCalls`` shapes its own.
    private func failure(_ call: SystemCall, _ errno: Int32, path: String? = nil) -> SystemError {
        SystemError(call: call, errno: errno, path: path)
    }

    // MARK: SystemCalls

    /// `open(2)`, recording the descriptor's path; an injected fault opens nothing.
    package func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        if let fault = begin(.open, paths: [path]), let errno = fault.errno {
            throw failure(.open, errno, path: path)
        }
        let fd = try base.open(path, options, mode)
        state.withLock { state in state.descriptors[fd] = path }
        return fd
    }

    /// `close(2)`. An injected fault still closes the descriptor (as Linux
    /// does even when `close` reports an error), then throws.
    package func close(_ fd: FileDescriptor) throws(SystemError) {
        let fault = begin(.close, descriptor: fd)
        // Forgotten before the real close: once it returns, a concurrent open
        // may get the same number back.
        state.withLock { state in _ = state.descriptors.removeValue(forKey: fd) }
        if let fault, let errno = fault.errno {
            try? base.close(fd)
            throw failure(.close, errno)
        }
        try base.close(fd)
    }

    /// One `pread(2)`, possibly failed, shortened or torn.
    package func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        switch begin(.pread, descriptor: fd) {
        case nil:
            return try base.pread(fd, into: buffer, at: offset)
        case .fail(let errno):
            throw failure(.pread, errno)
        case .partialTransfer(let bytes):
            let count = min(bytes, buffer.count)
            if count == 0 { return 0 }
            return try base.pread(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]), at: offset)
        case .tornWrite(let bytes, let errno):
            let count = min(bytes, buffer.count)
            if count > 0 { _ = try base.pread(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]), at: offset) }
            throw failure(.pread, errno)
        }
    }

    /// One `pwrite(2)`, possibly failed, shortened or torn.
    package func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        switch begin(.pwrite, descriptor: fd) {
        case nil:
            return try base.pwrite(fd, from: buffer, at: offset)
        case .fail(let errno):
            throw failure(.pwrite, errno)
        case .partialTransfer(let bytes):
            let count = min(bytes, buffer.count)
            if count == 0 { return 0 }
            return try base.pwrite(fd, from: UnsafeRawBufferPointer(rebasing: buffer[..<count]), at: offset)
        case .tornWrite(let bytes, let errno):
            // Writes the torn prefix completely (looping over short writes of
            // the layer below), then reports the failure.
            let count = min(bytes, buffer.count)
            var done = 0
            while done < count {
                let rest = UnsafeRawBufferPointer(rebasing: buffer[done..<count])
                let n = try base.pwrite(fd, from: rest, at: offset + Int64(done))
                if n <= 0 { break }
                done += n
            }
            throw failure(.pwrite, errno)
        }
    }

    /// `fdatasync(2)`; an injected fault syncs nothing.
    package func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        if let fault = begin(.fdatasync, descriptor: fd), let errno = fault.errno { throw failure(.fdatasync, errno) }
        try base.fdatasync(fd)
    }

    /// `fsync(2)`; an injected fault syncs nothing.
    package func fsync(_ fd: FileDescriptor) throws(SystemError) {
        if let fault = begin(.fsync, descriptor: fd), let errno = fault.errno { throw failure(.fsync, errno) }
        try base.fsync(fd)
    }

    /// `ftruncate(2)`; an injected fault leaves the size unchanged.
    package func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) {
        if let fault = begin(.ftruncate, descriptor: fd), let errno = fault.errno { throw failure(.ftruncate, errno) }
        try base.ftruncate(fd, length)
    }

    /// The file's size (`fstat(2)`, counted as ``SystemCall/fstat``).
    package func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 {
        if let fault = begin(.fstat, descriptor: fd), let errno = fault.errno { throw failure(.fstat, errno) }
        return try base.fileSize(fd)
    }

    /// `rename(2)`; rules match either path. An injected fault renames nothing.
    package func rename(_ from: String, _ to: String) throws(SystemError) {
        if let fault = begin(.rename, paths: [from, to]), let errno = fault.errno { throw failure(.rename, errno, path: from) }
        try base.rename(from, to)
    }

    /// `link(2)`; rules match either path. An injected fault links nothing.
    package func link(_ existing: String, _ new: String) throws(SystemError) {
        if let fault = begin(.link, paths: [existing, new]), let errno = fault.errno { throw failure(.link, errno, path: new) }
        try base.link(existing, new)
    }

    /// `unlink(2)`; an injected fault removes nothing.
    package func unlink(_ path: String) throws(SystemError) {
        if let fault = begin(.unlink, paths: [path]), let errno = fault.errno { throw failure(.unlink, errno, path: path) }
        try base.unlink(path)
    }

    /// `flock(LOCK_EX | LOCK_NB)` (counted as ``SystemCall/flock``); inject
    /// `EWOULDBLOCK` (11) to imitate another holder.
    package func lockExclusive(_ fd: FileDescriptor) throws(SystemError) {
        if let fault = begin(.flock, descriptor: fd), let errno = fault.errno { throw failure(.flock, errno) }
        try base.lockExclusive(fd)
    }
}
