import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

// Options.fileProtection reaches every file the store creates, through the
// platform layer's one place of creation. On Linux the class itself is a
// no-op, so the calls are recorded at the seam where iOS would apply it.

/// The real system calls, recording each file opened with `create` and each
/// protection class given, and refusing protection when told to.
final class ProtectionRecorder: SystemCalls, @unchecked Sendable {
    private let base = PosixSystemCalls()
    private let lock = NSLock()
    private var createdPaths: [String] = []
    private var protectedPaths: [String: FileProtection] = [:]
    private var refusing = false

    var created: [String] { lock.withLock { createdPaths } }
    var protected: [String: FileProtection] { lock.withLock { protectedPaths } }
    func refuseProtection() { lock.withLock { refusing = true } }

    func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        let fd = try base.open(path, options, mode)
        if options.contains(.create) { lock.withLock { createdPaths.append(path) } }
        return fd
    }
    func protect(_ path: String, as protection: FileProtection) throws(SystemError) {
        let refused = lock.withLock { () -> Bool in
            if !refusing { protectedPaths[path] = protection }
            return refusing
        }
        if refused { throw SystemError(call: .fileProtection, errno: EPERM, path: path) }
    }
    func close(_ fd: FileDescriptor) throws(SystemError) { try base.close(fd) }
    func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        try base.pread(fd, into: buffer, at: offset)
    }
    func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        try base.pwrite(fd, from: buffer, at: offset)
    }
    func fdatasync(_ fd: FileDescriptor) throws(SystemError) { try base.fdatasync(fd) }
    func fsync(_ fd: FileDescriptor) throws(SystemError) { try base.fsync(fd) }
    func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) { try base.ftruncate(fd, length) }
    func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 { try base.fileSize(fd) }
    func rename(_ from: String, _ to: String) throws(SystemError) { try base.rename(from, to) }
    func link(_ existing: String, _ new: String) throws(SystemError) { try base.link(existing, new) }
    func unlink(_ path: String) throws(SystemError) { try base.unlink(path) }
    func lockExclusive(_ fd: FileDescriptor) throws(SystemError) { try base.lockExclusive(fd) }
    func directoryEntries(_ path: String) throws(SystemError) -> [String]? { try base.directoryEntries(path) }
}

@Suite("LocalStore: file protection")
struct FileProtectionTests {
    typealias Kit = StoreRulesKit

    static func options(_ recorder: ProtectionRecorder, _ protection: FileProtection?) -> LocalStore.Options {
        var options = Kit.options(system: recorder)
        options.fileProtection = protection
        return options
    }

    @Test("every file the store creates gets the protection class: journal, lock file, checkpoint, torn-tail side file")
    func everyCreatedFileIsProtected() async throws {
        for protection in FileProtection.allCases {
            try await Kit.withScratch { scratch in
                let recorder = ProtectionRecorder()
                let store = try await LocalStore.open(path: scratch.journal, options: Self.options(recorder, protection))
                try await store.create("pin", id: "cafe", fields: [:])
                try await store.checkpoint()
                await store.suspend()
                try await store.resume()
                try await store.close()

                // A journal with a torn tail: the writer's side file is created and protected too.
                let torn = scratch.url.path + "/torn.journal"
                try Kit.copySample("torn-tail.journal", to: torn)
                let repaired = try await LocalStore.open(path: torn, options: Self.options(recorder, protection))
                let side = try #require(repaired.recovery?.sideFile)
                try await repaired.close()

                let created = Set(recorder.created)
                let files = JournalFiles(journal: scratch.journal)
                for path in [files.creating, files.lock, files.checkpoint, side] {
                    #expect(created.contains(path), "\(protection): \(path) was created")
                }
                #expect(created.count >= 5)
                for path in created { #expect(recorder.protected[path] == protection, "\(protection): \(path)") }
            }
        }
    }

    @Test("without the option nothing is given a class; a class that cannot be given fails the open before anything is written")
    func offAndRefused() async throws {
        try await Kit.withScratch { scratch in
            let recorder = ProtectionRecorder()
            let store = try await LocalStore.open(path: scratch.journal, options: Self.options(recorder, nil))
            try await store.create("pin", id: "cafe", fields: [:])
            try await store.close()
            #expect(!recorder.created.isEmpty)
            #expect(recorder.protected.isEmpty)

            let refusing = ProtectionRecorder()
            refusing.refuseProtection()
            let path = scratch.url.path + "/other.journal"
            let error = await Kit.storeError { _ = try await LocalStore.open(path: path, options: Self.options(refusing, .complete)) }
            guard case .cannotOpen(_, .io(let cause))? = error else {
                Issue.record("expected cannotOpen(io), got \(String(describing: error))")
                return
            }
            #expect(cause.call == .fileProtection)
            #expect(!FileManager.default.fileExists(atPath: path), "no journal was written")
        }
    }
}
