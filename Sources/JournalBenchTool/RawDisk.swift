import SyncJournalPlatform

/// The raw-disk baselines: plain `pwrite` (+ `fdatasync`) loops over the
/// same record bytes the journal writes, with no journal logic at all.
enum RawFile {
    /// Writes all of `bytes` at the descriptor's current position.
    static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>, path: String) throws(BenchError) {
        do throws(Errno) { try SystemFile.writeAll(fd, bytes) } catch {
            throw BenchError("write to \(path) failed: \(error.message) (\(error))")
        }
    }

    /// Writes all of `bytes` at `offset`.
    static func pwriteAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64, path: String) throws(BenchError) {
        var done = 0
        while done < bytes.count {
            let count: Int
            do throws(Errno) {
                count = try SystemFile.pwrite(fd, from: UnsafeRawBufferPointer(rebasing: bytes[done...]), at: offset + Int64(done))
            } catch {
                throw BenchError("pwrite to \(path) failed: \(error.message) (\(error))")
            }
            if count <= 0 { throw BenchError("pwrite to \(path) made no progress") }
            done += count
        }
    }

    /// The same durability barrier the journal uses (`fdatasync` on Linux).
    static func sync(_ fd: Int32, path: String) throws(BenchError) {
        do throws(Errno) { try SystemFile.durabilityBarrier(fd) } catch {
            throw BenchError("fdatasync of \(path) failed: \(error.message) (\(error))")
        }
    }

    /// `fsync`s the whole file.
    static func fullSync(_ fd: Int32, path: String) throws(BenchError) {
        do throws(Errno) { try SystemFile.fsync(fd) } catch {
            throw BenchError("fsync of \(path) failed: \(error.message) (\(error))")
        }
    }

    /// Creates (or empties) the file at `path` for reading and writing.
    static func create(_ path: String) throws(BenchError) -> Int32 {
        do throws(Errno) { return try SystemFile.open(path, [.readWrite, .create, .truncate], mode: 0o600) } catch {
            throw BenchError("cannot create \(path): \(error.message) (\(error))")
        }
    }

    /// Opens a fresh file; with `preallocateBytes` > 0 it is zero-filled to
    /// that size and fsynced first (so later writes do not change its size).
    static func fresh(_ path: String, preallocateBytes: Int) throws(BenchError) -> Int32 {
        Files.remove(path)
        let fd = try create(path)
        if preallocateBytes > 0 {
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            var written = 0
            while written < preallocateBytes {
                let count = min(zeros.count, preallocateBytes - written)
                do { try writeAll(fd, zeros[0..<count], path: path) } catch {
                    try? SystemFile.close(fd)
                    throw error
                }
                written += count
            }
            do { try fullSync(fd, path: path) } catch {
                try? SystemFile.close(fd)
                throw error
            }
        }
        return fd
    }

    /// Result of a loop: seconds, and per-sync latencies when asked for.
    struct Run {
        var seconds: Double
        var latencies: [Double]
    }

    /// `count` records, `perSync` records per `pwrite` + `fdatasync` (0 = never
    /// sync: one `write` per record, buffered by the kernel), into a growing
    /// file or one preallocated and zero-filled.
    static func appendLoop(path: String, record: [UInt8], count: Int, perSync: Int, preallocated: Bool) throws(BenchError) -> Run {
        let fd = try fresh(path, preallocateBytes: preallocated ? record.count * (count + 64) + (1 << 20) : 0)
        defer {
            try? SystemFile.close(fd)
            Files.remove(path)
        }
        let group = max(1, perSync)
        var batch: [UInt8] = []
        for _ in 0..<group { batch += record }
        var latencies: [Double] = []
        if perSync > 0 { latencies.reserveCapacity(count / group + 1) }
        var offset: Int64 = 0
        let start = Clock.now()
        var done = 0
        while done < count {
            let n = min(group, count - done)
            let began = Clock.now()
            let failure: BenchError? = batch.withUnsafeBytes { raw in
                do throws(BenchError) {
                    try pwriteAll(fd, UnsafeRawBufferPointer(rebasing: raw[0..<(n * record.count)]), at: offset, path: path)
                    return nil
                } catch { return error }
            }
            if let failure { throw failure }
            if perSync > 0 {
                try sync(fd, path: path)
                latencies.append(Clock.now() - began)
            }
            offset += Int64(n * record.count)
            done += n
        }
        return Run(seconds: Clock.now() - start, latencies: latencies)
    }

    /// Writes `bytes` bytes sequentially in 1 MiB writes into a new file and
    /// `fsync`s it: the disk's own rate for a checkpoint-sized file. Returns seconds.
    static func sequentialWrite(path: String, bytes: Int) throws(BenchError) -> Double {
        Files.remove(path)
        let fd = try create(path)
        defer {
            try? SystemFile.close(fd)
            Files.remove(path)
        }
        let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
        let start = Clock.now()
        var written = 0
        while written < bytes {
            let count = min(chunk.count, bytes - written)
            try writeAll(fd, chunk[0..<count], path: path)
            written += count
        }
        try fullSync(fd, path: path)
        return Clock.now() - start
    }
}
