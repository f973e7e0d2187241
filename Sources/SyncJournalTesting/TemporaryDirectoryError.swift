/// Why a ``TemporaryDirectory`` could not be made or read.
public enum TemporaryDirectoryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The directory at `path` could not be created.
    case cannotCreate(path: String, reason: String)
    /// The directory at `path` could not be listed.
    case cannotList(path: String, reason: String)

    /// One line naming the path and the reason.
    public var description: String {
        switch self {
        case .cannotCreate(let path, let reason): return "cannot create temporary directory \(path): \(reason)"
        case .cannotList(let path, let reason): return "cannot list temporary directory \(path): \(reason)"
        }
    }
}
