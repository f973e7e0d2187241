#if canImport(Glibc)
import Glibc
#endif
import CSQLite
import SyncJournalPlatform
import SyncJournalCore

/// Why the benchmark could not run (file trouble, SQLite errors, a failed store call).
public struct BenchError: Error, Sendable, CustomStringConvertible {
    /// A one-line explanation.
    public var description: String

    /// Creates an error with its explanation.
    public init(_ description: String) { self.description = description }
}

/// A monotonic clock in seconds.
enum Clock {
    static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Runs `body` and returns its duration in seconds.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return now() - start
    }
}

/// Resident memory of this process, from `/proc/self/status`.
enum Memory {
    /// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`), 0 if unreadable.
    static func statusKiB(_ field: String) -> Int {
        let fd = Glibc.open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { _ = Glibc.close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter { $0.isNumber }
            return Int(digits) ?? 0
        }
        return 0
    }

    /// Resident memory now, in MiB.
    static func residentMiB() -> Double { Double(statusKiB("VmRSS")) / 1024 }

    /// Peak resident memory since the last ``resetPeak()``, in MiB.
    static func peakMiB() -> Double { Double(statusKiB("VmHWM")) / 1024 }

    /// Resets the peak (`VmHWM`) to the current resident size by writing 5
    /// to `/proc/self/clear_refs` (Linux 4.0+). Returns whether it worked.
    @discardableResult
    static func resetPeak() -> Bool {
        let fd = Glibc.open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { _ = Glibc.close(fd) }
        return Glibc.write(fd, "5", 1) == 1
    }
}

/// The real system calls, counting `fdatasync` (to report the syncs group commit issues).
final class CountingSystemCalls: SystemCalls {
    private let base = PosixSystemCalls()
    private let syncs = Atomic<Int>(0)

    /// `fdatasync` calls so far.
    var fdatasyncCount: Int { syncs.load(ordering: .relaxed) }

    func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor { try base.open(path, options, mode) }
    func close(_ fd: FileDescriptor) throws(SystemError) { try base.close(fd) }
    func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        try base.pread(fd, into: buffer, at: offset)
    }
    func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        try base.pwrite(fd, from: buffer, at: offset)
    }
    func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        syncs.add(1, ordering: .relaxed)
        try base.fdatasync(fd)
    }
    func fsync(_ fd: FileDescriptor) throws(SystemError) { try base.fsync(fd) }
    func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) { try base.ftruncate(fd, length) }
    func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 { try base.fileSize(fd) }
    func rename(_ from: String, _ to: String) throws(SystemError) { try base.rename(from, to) }
    func unlink(_ path: String) throws(SystemError) { try base.unlink(path) }
    func lockExclusive(_ fd: FileDescriptor) throws(SystemError) { try base.lockExclusive(fd) }
}

/// Small file helpers for the benchmark's scratch directory.
enum Files {
    /// Removes a file if it exists (and its lock and side files' usual names).
    static func remove(_ path: String) {
        for suffix in ["", ".lock", ".checkpoint", ".creating", "-wal", "-shm", "-journal"] { _ = unlink(path + suffix) }
    }

    /// The size of the file at `path`, 0 if there is none.
    static func size(_ path: String) -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return Int64(info.st_size)
    }

    /// Copies `source` to `destination` (1 MiB at a time), replacing it.
    static func copy(_ source: String, to destination: String) throws(BenchError) {
        let input = Glibc.open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw BenchError("cannot open \(source): errno \(errno)") }
        defer { _ = Glibc.close(input) }
        let output = Glibc.open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw BenchError("cannot create \(destination): errno \(errno)") }
        defer { _ = Glibc.close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if count < 0 { throw BenchError("cannot read \(source): errno \(errno)") }
            if count == 0 { break }
            try RawFile.writeAll(output, buffer[0..<count], path: destination)
        }
    }

    /// Reads the whole file once (into the page cache) and returns the seconds it took.
    static func readAll(_ path: String) throws(BenchError) -> Double {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BenchError("cannot open \(path): errno \(errno)") }
        defer { _ = Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let start = Clock.now()
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 { throw BenchError("cannot read \(path): errno \(errno)") }
            if count == 0 { break }
        }
        return Clock.now() - start
    }
}

/// The heap bytes in use (glibc `mallinfo2`: allocated chunks plus mmapped
/// blocks), sampled on a thread of its own while a piece of work runs, so
/// memory freed earlier and kept by the allocator does not hide a peak.
final class HeapSampler: @unchecked Sendable {
    private let stop = Atomic<Bool>(false)
    private let peak = Atomic<Int>(0)
    private var thread = pthread_t()
    private var started = false

    /// Heap bytes in use now.
    static func inUse() -> Int {
        let info = mallinfo2()
        return Int(info.uordblks) + Int(info.hblkhd)
    }

    /// Starts sampling (every 200 µs).
    func start() {
        peak.store(Self.inUse(), ordering: .relaxed)
        let box = Unmanaged.passRetained(self)
        started = pthread_create(&thread, nil, { context in
            let sampler = Unmanaged<HeapSampler>.fromOpaque(context!).takeRetainedValue()
            while !sampler.stop.load(ordering: .relaxed) {
                let now = HeapSampler.inUse()
                if now > sampler.peak.load(ordering: .relaxed) { sampler.peak.store(now, ordering: .relaxed) }
                usleep(200)
            }
            return nil
        }, box.toOpaque()) == 0
        if !started { box.release() }
    }

    /// Stops sampling and returns the largest heap in use seen, in bytes.
    func finish() -> Int {
        stop.store(true, ordering: .relaxed)
        if started { pthread_join(thread, nil) }
        return max(peak.load(ordering: .relaxed), Self.inUse())
    }
}
