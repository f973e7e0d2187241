import SyncJournalCore
import SyncJournalPlatform
import SyncJournalTesting
import Testing

@Suite("Fault injector")
struct FaultInjectingSystemCallsTests {
    @Test("The injector remembers each descriptor's path until it is closed, and matches descriptor calls by that path")
    func tracksDescriptorPaths() async throws {
        try await withTemporaryDirectory { directory in
            let faults = FaultInjectingSystemCalls()
            let a = directory.file("a.data"), b = directory.file("b.data")
            let fdA = try faults.open(a, [.readWrite, .create], 0o600)
            let fdB = try faults.open(b, [.readWrite, .create], 0o600)
            #expect(faults.path(of: fdA) == a)
            #expect(faults.openDescriptors == [fdA: a, fdB: b])
            faults.inject(.noSpace, into: .pwrite, on: .path(b), when: .everyCall)
            let bytes: [UInt8] = [1, 2, 3]
            #expect(try bytes.withUnsafeBytes { try faults.pwrite(fdA, from: $0, at: 0) } == 3)
            #expect(throws: SystemError(call: .pwrite, errno: Errno.noSpace.rawValue)) {
                try bytes.withUnsafeBytes { try faults.pwrite(fdB, from: $0, at: 0) }
            }
            #expect(try FileBytes.read(b).isEmpty)
            #expect(faults.callCount(.pwrite) == 2)
            #expect(faults.callCount(.pwrite, on: .path(a)) == 1)
            #expect(faults.callCount(.pwrite, on: .pathSuffix("b.data")) == 1)
            #expect(faults.callCount(.pwrite, on: .pathContaining("nothing")) == 0)
            try faults.close(fdA)
            try faults.close(fdB)
            #expect(faults.openDescriptors.isEmpty)
            #expect(faults.callCounts == [.open: 2, .pwrite: 2, .close: 2])
        }
    }

    @Test("An nth-call rule fails only that call, counted from when it was injected; every-call and from-nth rules keep firing")
    func schedulesSelectTheRightCalls() async throws {
        try await withTemporaryDirectory { directory in
            let faults = FaultInjectingSystemCalls()
            let fd = try faults.open(directory.file("f"), [.readWrite, .create], 0o600)
            defer { try? faults.close(fd) }
            try faults.fsync(fd)
            let third = faults.inject(.ioError, into: .fsync, when: .nthCall(3))
            var outcomes: [Bool] = []
            for _ in 0..<5 { outcomes.append((try? faults.fsync(fd)) != nil) }
            #expect(outcomes == [true, true, false, true, true])
            #expect(faults.timesFired(third) == 1)

            let later = faults.inject(.ioError, into: .fdatasync, when: .fromNthCall(2))
            outcomes = (0..<4).map { _ in (try? faults.fdatasync(fd)) != nil }
            #expect(outcomes == [true, false, false, false])
            #expect(faults.timesFired(later) == 3)
            faults.remove(later)
            #expect(faults.timesFired(later) == 3)
            try faults.fdatasync(fd)
            #expect(faults.callCount(.fdatasync) == 5)
            #expect(faults.callCount(.fsync) == 6)

            faults.inject(.fail(errno: Errno.wouldBlock.rawValue), into: .flock, when: .everyCall)
            #expect(throws: SystemError(call: .flock, errno: Errno.wouldBlock.rawValue)) { try faults.lockExclusive(fd) }
            faults.removeAllFaults()
            #expect(faults.rules.isEmpty)
            faults.resetCallCounts()
            #expect(faults.callCounts.isEmpty)
        }
    }

    @Test("A torn write leaves exactly its first k bytes in the file and throws; a partial transfer returns k")
    func tornAndPartialWrites() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("torn.data")
            let faults = FaultInjectingSystemCalls()
            let fd = try faults.open(path, [.readWrite, .create], 0o600)
            defer { try? faults.close(fd) }
            let bytes = Array(UInt8(1)...UInt8(20))
            faults.inject(.tornWrite(bytes: 6, errno: Errno.ioError.rawValue), into: .pwrite)
            #expect(throws: SystemError(call: .pwrite, errno: Errno.ioError.rawValue)) {
                try bytes.withUnsafeBytes { try faults.pwrite(fd, from: $0, at: 0) }
            }
            #expect(try FileBytes.read(path) == Array(bytes.prefix(6)))
            faults.inject(.partialTransfer(bytes: 4), into: .pwrite)
            #expect(try bytes.withUnsafeBytes { try faults.pwrite(fd, from: $0, at: 10) } == 4)
            #expect(try FileBytes.read(path) == Array(bytes.prefix(6)) + [0, 0, 0, 0] + Array(bytes.prefix(4)))
        }
    }

    @Test("An injected close failure still closes the descriptor underneath (as Linux does) and forgets its path")
    func failedCloseReleasesTheDescriptor() async throws {
        try await withTemporaryDirectory { directory in
            let faults = FaultInjectingSystemCalls()
            let fd = try faults.open(directory.file("c"), [.readWrite, .create], 0o600)
            faults.inject(.ioError, into: .close)
            #expect(throws: SystemError(call: .close, errno: Errno.ioError.rawValue)) { try faults.close(fd) }
            #expect(faults.path(of: fd) == nil)
            #expect(faults.openDescriptors.isEmpty)
        }
    }
}
