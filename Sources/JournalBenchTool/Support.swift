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
    static func now() -> Double { Double(SystemClock.monotonicNanoseconds()) / 1e9 }

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
        guard let fd = try? SystemFile.open("/proc/self/status", .readOnly) else { return 0 }
        defer { try? SystemFile.close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { (try? SystemFile.read(fd, into: $0)) ?? 0 }
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
        guard let fd = try? SystemFile.open("/proc/self/clear_refs", .writeOnly) else { return false }
        defer { try? SystemFile.close(fd) }
        return (try? SystemFile.writeAll(fd, "5".utf8)) != nil
    }
}

/// The real system calls, counting `fdatasync` (to report the syncs group commit issues).
final class CountingSystemCalls: SystemCallsLayer {
    let base: any SystemCalls = PosixSystemCalls()
    private let syncs = Atomic<Int>(0)

    /// `fdatasync` calls so far.
    var fdatasyncCount: Int { syncs.load(ordering: .relaxed) }

    func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        syncs.add(1, ordering: .relaxed)
        try base.fdatasync(fd)
    }
}

/// Small file helpers for the benchmark's scratch directory.
enum Files {
    /// Removes a file if it exists, with every side file a journal writer
    /// makes next to it (``JournalFiles``: lock, creating, checkpoint, torn
    /// tails) and SQLite's (`-wal`, `-shm`, `-journal`).
    static func remove(_ path: String) {
        let files = JournalFiles(journal: path)
        for file in [path] + files.fixedSideFiles + ["-wal", "-shm", "-journal"].map({ path + $0 }) { try? SystemPath.unlink(file) }
        let directory = FileIO.directory(of: path)
        for name in (try? SystemPath.entries(of: directory)) ?? [] {
            let candidate = directory + "/" + name
            if files.isTornTail(candidate) { try? SystemPath.unlink(candidate) }
        }
    }

    /// The size of the file at `path`, 0 if there is none.
    static func size(_ path: String) -> Int64 {
        (try? SystemPath.size(path)) ?? 0
    }

    /// Copies `source` to `destination` (1 MiB at a time), replacing it.
    static func copy(_ source: String, to destination: String) throws(BenchError) {
        let input = try openForReading(source)
        defer { try? SystemFile.close(input) }
        let output = try RawFile.create(destination)
        defer { try? SystemFile.close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = try read(input, into: &buffer, path: source)
            if count == 0 { break }
            try RawFile.writeAll(output, buffer[0..<count], path: destination)
        }
    }

    /// Reads the whole file once (into the page cache) and returns the seconds it took.
    static func readAll(_ path: String) throws(BenchError) -> Double {
        let fd = try openForReading(path)
        defer { try? SystemFile.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let start = Clock.now()
        while try read(fd, into: &buffer, path: path) > 0 {}
        return Clock.now() - start
    }

    private static func openForReading(_ path: String) throws(BenchError) -> Int32 {
        do throws(Errno) { return try SystemFile.open(path, .readOnly) } catch {
            throw BenchError("cannot open \(path): \(error.message) (\(error))")
        }
    }

    /// One `read(2)` into `buffer`; 0 at end of file.
    private static func read(_ fd: Int32, into buffer: inout [UInt8], path: String) throws(BenchError) -> Int {
        let result: Result<Int, Errno> = buffer.withUnsafeMutableBytes { bytes in
            do throws(Errno) { return .success(try SystemFile.read(fd, into: bytes)) } catch { return .failure(error) }
        }
        switch result {
        case .success(let count): return count
        case .failure(let error): throw BenchError("cannot read \(path): \(error.message) (\(error))")
        }
    }
}

/// The heap bytes in use (glibc `mallinfo2`: allocated chunks plus mmapped
/// blocks), sampled on a thread of its own while a piece of work runs, so
/// memory freed earlier and kept by the allocator does not hide a peak.
final class HeapSampler: @unchecked Sendable {
    private let stop = Atomic<Bool>(false)
    private let peak = Atomic<Int>(0)
    private var thread: PlatformThread?

    /// Heap bytes in use now.
    static func inUse() -> Int {
        #if os(Linux)
        let info = mallinfo2()
        return Int(info.uordblks) + Int(info.hblkhd)
        #else
        // Only glibc's figure is sampled; elsewhere the peak is not measured.
        return 0
        #endif
    }

    /// Starts sampling (every 200 µs).
    func start() {
        peak.store(Self.inUse(), ordering: .relaxed)
        thread = PlatformThread.start { [self] in
            while !stop.load(ordering: .relaxed) {
                let now = HeapSampler.inUse()
                if now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
                SystemClock.pause(microseconds: 200)
            }
        }
    }

    /// Stops sampling and returns the largest heap in use seen, in bytes.
    func finish() -> Int {
        stop.store(true, ordering: .relaxed)
        thread?.join()
        thread = nil
        return max(peak.load(ordering: .relaxed), Self.inUse())
    }
}
