import SyncJournalCore

/// Which files a ``FaultRule`` (or a call count) applies to.
///
/// Calls that take a descriptor (`pread`, `pwrite`, `fdatasync`, `fsync`,
/// `ftruncate`, `fstat`, `flock`, `close`) are matched through the path the
/// descriptor was opened with, which ``FaultInjectingSystemCalls`` records at
/// every `open`. A `rename` matches when either of its paths does.
public enum TargetFile: Sendable, Hashable, CustomStringConvertible {
    /// Every file, and calls whose file is unknown.
    case any
    /// The file opened or named with exactly this path.
    case path(String)
    /// Files whose path ends with this text (`".lock"`, `".journal"`).
    case pathSuffix(String)
    /// Files whose path contains this text.
    case pathContaining(String)

    /// Whether a call on `paths` (the paths it names or its descriptor was
    /// opened with) is one of these files.
    package func matches(paths: [String]) -> Bool {
        switch self {
        case .any: return true
        case .path(let wanted): return paths.contains(wanted)
        case .pathSuffix(let suffix): return paths.contains { $0.hasSuffix(suffix) }
        case .pathContaining(let part): return paths.contains { $0.contains(part) }
        }
    }

    /// A short explanation, such as `path /tmp/x.journal`.
    public var description: String {
        switch self {
        case .any: return "any file"
        case .path(let path): return "path \(path)"
        case .pathSuffix(let suffix): return "paths ending in \(suffix)"
        case .pathContaining(let part): return "paths containing \(part)"
        }
    }
}
