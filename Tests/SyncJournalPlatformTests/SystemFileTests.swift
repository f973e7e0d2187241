import SyncJournalPlatform
import Testing

@Suite("File wrappers")
struct SystemFileTests {
    /// Runs `body` with a fresh directory under `/tmp`, removed afterwards.
    private func withScratch(_ body: (String) throws -> Void) throws {
        let directory = try SystemPath.makeTemporaryDirectory(template: "/tmp/syncjournal-platform-tests-XXXXXX")
        defer {
            for name in (try? SystemPath.entries(of: directory)) ?? [] { try? SystemPath.unlink(directory + "/" + name) }
            try? SystemPath.removeDirectory(directory)
        }
        try body(directory)
    }

    @Test("Opening a missing file fails with noSuchFile (ENOENT)")
    func missingFile() throws {
        try withScratch { directory in
            #expect(throws: Errno.noSuchFile) { _ = try SystemFile.open(directory + "/missing", .readOnly) }
        }
    }

    @Test("Creating a file exclusively where one exists fails with fileExists (EEXIST)")
    func exclusiveCreate() throws {
        try withScratch { directory in
            let path = directory + "/f"
            try SystemFile.close(try SystemFile.open(path, [.readWrite, .create], mode: 0o600))
            #expect(throws: Errno.fileExists) { _ = try SystemFile.open(path, [.readWrite, .create, .exclusive], mode: 0o600) }
        }
    }

    @Test("Bytes written at an offset read back, the size follows, truncation cuts, and the barrier succeeds on a real file")
    func writeReadTruncateSync() throws {
        try withScratch { directory in
            let path = directory + "/data"
            let fd = try SystemFile.open(path, [.readWrite, .create], mode: 0o600)
            defer { try? SystemFile.close(fd) }
            let bytes: [UInt8] = [1, 2, 3, 4, 5]
            let written = try bytes.withUnsafeBytes { buffer in try SystemFile.pwrite(fd, from: buffer, at: 3) }
            #expect(written == 5)
            try SystemFile.durabilityBarrier(fd)
            #expect(try SystemFile.size(fd) == 8)
            var back = [UInt8](repeating: 0, count: 5)
            let read = try back.withUnsafeMutableBytes { buffer in try SystemFile.pread(fd, into: buffer, at: 3) }
            #expect(read == 5 && back == bytes)
            try SystemFile.truncate(fd, to: 4)
            #expect(try SystemPath.size(path) == 4)
        }
    }

    @Test("A failed durability barrier reports the errno and is not turned into success")
    func failedBarrier() {
        #expect(throws: Errno.badDescriptor) { try SystemFile.durabilityBarrier(-1) }
    }

    @Test("Only errors that mean F_FULLFSYNC is unsupported fall back to fsync; an I/O error never does")
    func fullSyncFallbackClassification() {
        #expect(SystemFile.fullSyncUnsupported(.notSupported))
        #expect(SystemFile.fullSyncUnsupported(.invalidArgument))
        #expect(!SystemFile.fullSyncUnsupported(.ioError))
        #expect(!SystemFile.fullSyncUnsupported(.noSpace))
        #expect(!SystemFile.fullSyncUnsupported(.badDescriptor))
    }

    @Test("Taking the whole-file record lock twice in one process succeeds: record locks only exclude other processes")
    func recordLockDoesNotExcludeItsOwnProcess() throws {
        try withScratch { directory in
            let fd = try SystemFile.open(directory + "/lock", [.readWrite, .create], mode: 0o600)
            defer { try? SystemFile.close(fd) }
            try SystemFile.lockExclusive(fd)
            try SystemFile.lockExclusive(fd)
        }
    }

    @Test("A renamed file is found under its new name only, and unlink removes it")
    func renameAndUnlink() throws {
        try withScratch { directory in
            try SystemFile.close(try SystemFile.open(directory + "/a", [.readWrite, .create], mode: 0o600))
            try SystemFile.rename(directory + "/a", to: directory + "/b")
            #expect(try SystemPath.entries(of: directory) == ["b"])
            try SystemFile.unlink(directory + "/b")
            #expect(throws: Errno.noSuchFile) { try SystemFile.unlink(directory + "/b") }
        }
    }
}
