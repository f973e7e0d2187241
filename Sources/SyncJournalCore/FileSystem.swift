/// The file system a store reads and writes its journal on.
///
/// Apps use the machine's own, ``system``, which is the default everywhere.
/// Tests hand a store a simulated one instead: `SimulatedDisk` from
/// SyncJournalTesting loses unsynced sectors at a simulated power cut, and
/// `FaultInjectingSystemCalls` fails chosen calls with `ENOSPC` or `EIO`.
///
/// ```swift
/// import SyncJournal
///
/// let options = LocalStore.Options(fileSystem: .system)
/// ```
public struct FileSystem: Sendable {
    /// Every file access of the store goes through these calls.
    package let calls: any SystemCalls

    /// A file system made of these calls.
    package init(_ calls: any SystemCalls) { self.calls = calls }

    /// The machine's file system, through the POSIX calls of the platform.
    public static var system: FileSystem { FileSystem(PosixSystemCalls()) }
}
