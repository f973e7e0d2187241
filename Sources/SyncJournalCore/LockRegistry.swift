import SyncJournalPlatform

/// The journals this process has open for writing. The file lock keeps other
/// processes out; POSIX record locks do not exclude a second open in the same
/// process, so this set does.
enum LockRegistry {
    private static let held = Mutex<Set<String>>([])

    /// The canonical path of an existing lock file (symbolic links and `..` resolved).
    static func key(for lockPath: String) -> String {
        (try? SystemPath.canonical(lockPath)) ?? lockPath
    }

    /// Claims `key`; false if this process already holds it.
    static func claim(_ key: String) -> Bool { held.withLock { $0.insert(key).inserted } }

    /// Gives `key` back.
    static func release(_ key: String) { _ = held.withLock { $0.remove(key) } }
}
