import SyncJournalPlatform
#if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
import Foundation
#endif

/// The real system calls, through the platform layer.
package struct PosixSystemCalls: SystemCalls {
    /// Creates the real system-call layer.
    package init() {}

    package func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        do { return FileDescriptor(rawValue: try SystemFile.open(path, options, mode: mode)) } catch {
            throw SystemError(call: .open, code: error, path: path)
        }
    }

    package func close(_ fd: FileDescriptor) throws(SystemError) {
        do { try SystemFile.close(fd.rawValue) } catch { throw SystemError(call: .close, code: error) }
    }

    package func pread(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        do { return try SystemFile.pread(fd.rawValue, into: buffer, at: offset) } catch { throw SystemError(call: .pread, code: error) }
    }

    package func pwrite(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        do { return try SystemFile.pwrite(fd.rawValue, from: buffer, at: offset) } catch { throw SystemError(call: .pwrite, code: error) }
    }

    /// The platform's durability barrier:
    /// `fdatasync` on Linux, `F_FULLFSYNC` on Apple platforms. Any failure is final.
    package func fdatasync(_ fd: FileDescriptor) throws(SystemError) {
        do { try SystemFile.durabilityBarrier(fd.rawValue) } catch { throw SystemError(call: .fdatasync, code: error) }
    }

    package func fsync(_ fd: FileDescriptor) throws(SystemError) {
        do { try SystemFile.fsync(fd.rawValue) } catch { throw SystemError(call: .fsync, code: error) }
    }

    package func ftruncate(_ fd: FileDescriptor, _ length: Int64) throws(SystemError) {
        do { try SystemFile.truncate(fd.rawValue, to: length) } catch { throw SystemError(call: .ftruncate, code: error) }
    }

    package func fileSize(_ fd: FileDescriptor) throws(SystemError) -> Int64 {
        do { return try SystemFile.size(fd.rawValue) } catch { throw SystemError(call: .fstat, code: error) }
    }

    package func rename(_ from: String, _ to: String) throws(SystemError) {
        do { try SystemFile.rename(from, to: to) } catch { throw SystemError(call: .rename, code: error, path: from) }
    }

    package func link(_ existing: String, _ new: String) throws(SystemError) {
        do { try SystemFile.link(existing, to: new) } catch { throw SystemError(call: .link, code: error, path: new) }
    }

    package func unlink(_ path: String) throws(SystemError) {
        do { try SystemFile.unlink(path) } catch { throw SystemError(call: .unlink, code: error, path: path) }
    }

    package func lockExclusive(_ fd: FileDescriptor) throws(SystemError) {
        do { try SystemFile.lockExclusive(fd.rawValue) } catch { throw SystemError(call: .flock, code: error) }
    }

    package func makeDirectory(_ path: String) throws(SystemError) {
        do { try SystemPath.makeDirectory(path) } catch { throw SystemError(call: .mkdir, code: error, path: path) }
    }

    package func directoryEntries(_ path: String) throws(SystemError) -> [String]? {
        do { return try SystemPath.entries(of: path) } catch { throw SystemError(call: .open, code: error, path: path) }
    }

    /// On iOS, tvOS, watchOS and visionOS, sets the file's protection class
    /// through Foundation (`FileProtectionType`); a no-op elsewhere (macOS
    /// and Linux have no per-file classes).
    package func protect(_ path: String, as protection: FileProtection) throws(SystemError) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        let type: FileProtectionType
        switch protection {
        case .none: type = .none
        case .complete: type = .complete
        case .completeUnlessOpen: type = .completeUnlessOpen
        case .completeUntilFirstUserAuthentication: type = .completeUntilFirstUserAuthentication
        }
        do {
            try FileManager.default.setAttributes([.protectionKey: type], ofItemAtPath: path)
        } catch {
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            let code = underlying?.domain == NSPOSIXErrorDomain ? Int32(truncatingIfNeeded: underlying?.code ?? 0) : 0
            throw SystemError(call: .fileProtection, errno: code != 0 ? code : Errno.ioError.rawValue, path: path)
        }
        #endif
    }
}
