/// A torn-tail side file, `<journal>.torn-<offset>` (`journals/FORMAT.md`,
/// section 3, "Torn-tail side files"): the non-zero bytes of the tail a
/// repair cut off, with their offsets, so the tail can be inspected or
/// rebuilt without keeping the preallocated zeros it mostly is.
///
/// Layout, integers little-endian:
///
/// | size | field |
/// |---:|---|
/// | 17 | magic line `SJRN torn tail 1\n` |
/// | 8 | number `u64`: 1 for a journal's first side file, then one more than the highest present |
/// | 8 | cut offset `u64`: the journal offset the tail started at |
/// | 8 | tail length `u64`: bytes from the cut to the old end of the file |
/// | … | runs, in offset order: offset `u64` (in the journal), length `u32`, that many bytes |
/// | 4 | checksum `u32`: masked CRC-32C of every byte before it |
///
/// A run starts and ends with a non-zero byte; fewer than
/// ``zeroGapEndingRun`` zeros in a row stay inside it (a new run's 12-byte
/// header would cost more). Every tail byte outside the runs is zero.
package struct TornTailFile: Sendable, Hashable {
    /// One stretch of the tail that is kept.
    package struct Run: Sendable, Hashable {
        /// Where the bytes were in the journal.
        package var offset: Int64
        /// The bytes.
        package var bytes: [UInt8]

        package init(offset: Int64, bytes: [UInt8]) {
            self.offset = offset
            self.bytes = bytes
        }
    }

    /// Why bytes are not a complete side file.
    package enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The magic line is missing: not a side file of this format (or one
        /// from before it, which held the raw tail).
        case notATornTailFile
        /// The file ends before its checksum or inside a run: a write that
        /// did not finish.
        case truncated
        /// The checksum does not match.
        case checksumMismatch
        /// A run lies outside the tail, overlaps the one before, or does not
        /// start and end with a non-zero byte.
        case badRun(index: Int)

        package var description: String {
            switch self {
            case .notATornTailFile: return "not a torn-tail side file"
            case .truncated: return "truncated side file"
            case .checksumMismatch: return "side file checksum mismatch"
            case .badRun(let index): return "run \(index) is out of order or outside the tail"
            }
        }
    }

    /// A side file that cannot be read, with its path.
    package struct ReadError: Error, Sendable, Hashable, CustomStringConvertible {
        package var path: String
        package var problem: Problem?
        package var io: SystemError?

        package var description: String {
            if let io { return "\(path): I/O error: \(io)" }
            return "\(path): \(problem?.description ?? "unreadable")"
        }
    }

    package static let magic = Array("SJRN torn tail 1\n".utf8)
    /// Magic, number, cut offset, tail length.
    package static let headerLength = magic.count + 24
    /// Zeros in a row that end a run.
    package static let zeroGapEndingRun = 16
    /// How many side files a journal keeps: a repair removes the oldest
    /// beyond this, once its own side file is complete and durable.
    package static let kept = 8

    package var number: UInt64
    package var cutOffset: Int64
    package var tailLength: Int64
    package var runs: [Run]

    package init(number: UInt64, cutOffset: Int64, tailLength: Int64, runs: [Run]) {
        self.number = number
        self.cutOffset = cutOffset
        self.tailLength = tailLength
        self.runs = runs
    }

    /// The tail as it was in the journal: the runs, zeros elsewhere.
    package func tailBytes() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(tailLength))
        for run in runs {
            let from = Int(run.offset - cutOffset)
            bytes.replaceSubrange(from..<(from + run.bytes.count), with: run.bytes)
        }
        return bytes
    }

    /// The file's bytes.
    package func encoded() -> [UInt8] {
        var bytes = Self.header(number: number, cutOffset: cutOffset, tailLength: tailLength)
        for run in runs {
            bytes += Self.runHeader(offset: run.offset, length: run.bytes.count)
            bytes += run.bytes
        }
        bytes += Self.littleEndian(CRC32C.mask(CRC32C.checksum(bytes)))
        return bytes
    }

    /// Parses and checks a whole side file.
    package static func decode(_ bytes: [UInt8]) throws(Problem) -> TornTailFile {
        guard bytes.count >= magic.count, Array(bytes[..<magic.count]) == magic else { throw .notATornTailFile }
        guard bytes.count >= headerLength + 4 else { throw .truncated }
        let body = bytes.count - 4
        let stored = load(bytes, body, UInt32.self)
        guard CRC32C.mask(CRC32C.checksum(bytes[..<body])) == stored else { throw .checksumMismatch }
        let number = load(bytes, magic.count, UInt64.self)
        let cut = Int64(bitPattern: load(bytes, magic.count + 8, UInt64.self))
        let tailLength = Int64(bitPattern: load(bytes, magic.count + 16, UInt64.self))
        guard cut >= 0, tailLength >= 0 else { throw .badRun(index: 0) }
        var runs: [Run] = []
        var at = headerLength
        var previousEnd = cut
        while at < body {
            guard body - at >= 12 else { throw .truncated }
            let offset = Int64(bitPattern: load(bytes, at, UInt64.self))
            let length = Int(load(bytes, at + 8, UInt32.self))
            at += 12
            guard body - at >= length else { throw .truncated }
            let run = Array(bytes[at..<(at + length)])
            guard offset >= previousEnd, length > 0, offset - cut <= tailLength - Int64(length),
                  run.first != 0, run.last != 0 else { throw .badRun(index: runs.count) }
            runs.append(Run(offset: offset, bytes: run))
            previousEnd = offset + Int64(length)
            at += length
        }
        return TornTailFile(number: number, cutOffset: cut, tailLength: tailLength, runs: runs)
    }

    /// Reads and checks the side file at `path`.
    package static func read(path: String, system: any SystemCalls = PosixSystemCalls()) throws(ReadError) -> TornTailFile {
        let bytes: [UInt8]
        do { bytes = try readWhole(path: path, io: FileIO(system)) } catch { throw ReadError(path: path, io: error) }
        do { return try decode(bytes) } catch { throw ReadError(path: path, problem: error) }
    }

    /// The runs of the journal's bytes `[from, to)`, as (offset, length):
    /// one pass over the tail, never holding more than a chunk of it.
    static func findRuns(fd: FileDescriptor, from: Int64, to end: Int64, io: FileIO, path: String) throws(SystemError) -> [(offset: Int64, length: Int)] {
        var runs: [(offset: Int64, length: Int)] = []
        var runStart: Int64?
        var lastNonZero: Int64 = 0
        var at = from
        let gap = Int64(zeroGapEndingRun)
        let longestRun = Int64(UInt32.max)
        while at < end {
            let chunk = try io.read(fd, count: Int(min(Int64(FileWindow.chunk), end - at)), at: at, path: path)
            if chunk.isEmpty { break }
            chunk.withUnsafeBytes { raw in
                for i in 0..<raw.count where raw[i] != 0 {
                    let p = at + Int64(i)
                    // A run also ends before it outgrows its u32 length.
                    if let start = runStart, p - lastNonZero - 1 >= gap || p - start >= longestRun {
                        runs.append((start, Int(lastNonZero + 1 - start)))
                        runStart = p
                    } else if runStart == nil {
                        runStart = p
                    }
                    lastNonZero = p
                }
            }
            at += Int64(chunk.count)
        }
        if let start = runStart { runs.append((start, Int(lastNonZero + 1 - start))) }
        return runs
    }

    /// Writes the side file of the journal's tail `[cut, end)` to the open
    /// `sideFD`, streaming: only the non-zero runs are copied.
    static func write(journalFD fd: FileDescriptor, journalPath: String, cut: Int64, end: Int64, number: UInt64,
                      to sideFD: FileDescriptor, sidePath: String, io: FileIO) throws(SystemError) {
        let runs = try findRuns(fd: fd, from: cut, to: end, io: io, path: journalPath)
        var checksum = CRC32C.Running()
        var written: Int64 = 0
        func emit(_ bytes: [UInt8]) throws(SystemError) {
            try io.writeAll(sideFD, bytes, at: written, path: sidePath)
            checksum.update(bytes)
            written += Int64(bytes.count)
        }
        try emit(header(number: number, cutOffset: cut, tailLength: end - cut))
        for run in runs {
            try emit(runHeader(offset: run.offset, length: run.length))
            var at = run.offset
            let runEnd = run.offset + Int64(run.length)
            while at < runEnd {
                let chunk = try io.read(fd, count: Int(min(Int64(FileWindow.chunk), runEnd - at)), at: at, path: journalPath)
                // The tail was just read: reading less now means the file changed under the repair.
                if chunk.isEmpty { throw SystemError(call: .pread, code: .ioError, path: journalPath) }
                try emit(chunk)
                at += Int64(chunk.count)
            }
        }
        try io.writeAll(sideFD, littleEndian(CRC32C.mask(checksum.value)), at: written, path: sidePath)
    }

    /// This journal's side files in its directory, newest first: complete
    /// ones by number, then any other (unfinished, or from before this
    /// format). Unreadable ones count as other.
    static func sideFiles(of journal: String, io: FileIO) -> [(path: String, number: UInt64?)] {
        let files = JournalFiles(journal: journal)
        let directory = FileIO.directory(of: journal)
        guard let names = try? io.system.directoryEntries(directory) else { return [] }
        let hasDirectory = journal.contains("/")
        var found: [(path: String, number: UInt64?)] = []
        for name in names {
            let path = hasDirectory ? (directory == "/" ? "/" + name : directory + "/" + name) : name
            guard files.isTornTail(path) else { continue }
            let number = (try? read(path: path, system: io.system))?.number
            found.append((path, number))
        }
        return found.sorted { a, b in
            switch (a.number, b.number) {
            case let (x?, y?): return x > y
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return a.path < b.path
            }
        }
    }

    /// Removes side files beyond the newest ``kept``. Called after a new
    /// complete side file is durable, so every file removed is older than
    /// a complete one. Best effort: a side file left behind is no harm.
    static func prune(journal: String, io: FileIO) {
        let all = sideFiles(of: journal, io: io)
        guard all.count > kept else { return }
        for old in all[kept...] { try? io.system.unlink(old.path) }
        try? io.syncDirectory(FileIO.directory(of: journal))
    }

    /// The number the next side file of `journal` gets.
    static func nextNumber(of journal: String, io: FileIO) -> UInt64 {
        (sideFiles(of: journal, io: io).compactMap(\.number).max() ?? 0) + 1
    }

    private static func header(number: UInt64, cutOffset: Int64, tailLength: Int64) -> [UInt8] {
        magic + littleEndian(number) + littleEndian(UInt64(bitPattern: cutOffset)) + littleEndian(UInt64(bitPattern: tailLength))
    }

    private static func runHeader(offset: Int64, length: Int) -> [UInt8] {
        littleEndian(UInt64(bitPattern: offset)) + littleEndian(UInt32(length))
    }

    private static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<MemoryLayout<T>.size).map { UInt8(truncatingIfNeeded: value >> T(8 * $0)) }
    }

    private static func load<T: FixedWidthInteger>(_ bytes: [UInt8], _ offset: Int, _: T.Type) -> T {
        var value: T = 0
        for i in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + i]) << T(8 * i) }
        return value
    }

    private static func readWhole(path: String, io: FileIO) throws(SystemError) -> [UInt8] {
        let fd: FileDescriptor
        do { fd = try io.system.open(path, .readOnly, 0) } catch { throw error.at(path) }
        defer { try? io.system.close(fd) }
        let size: Int64
        do { size = try io.system.fileSize(fd) } catch { throw error.at(path) }
        return try io.read(fd, count: Int(size), at: 0, path: path)
    }
}
