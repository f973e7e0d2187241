/// Why `sync-server` could not start, with the exit status the tool uses.
///
/// ```swift
/// catch { print("sync-server: \(error)"); exit(error.exitStatus) }
/// ```
public enum SyncServerError: Error, Sendable, CustomStringConvertible {
    /// The command line is wrong (exit 64).
    case usage(String)
    /// The users file cannot be read or has a bad line (exit 66).
    case users(UserDirectoryError)
    /// The database cannot be opened or set up (exit 73).
    case storage(StorageError)
    /// The address cannot be listened on (exit 69).
    case socket(SocketError)

    /// The process exit status (BSD `sysexits` numbering).
    ///
    /// ```swift
    /// SyncServerError.usage("--port needs a number").exitStatus   // 64
    /// ```
    public var exitStatus: Int32 {
        switch self {
        case .usage: return 64
        case .users: return 66
        case .storage: return 73
        case .socket: return 69
        }
    }

    /// One line for standard error.
    public var description: String {
        switch self {
        case .usage(let reason): return reason
        case .users(let error): return "users: \(error)"
        case .storage(let error): return "database: \(error)"
        case .socket(let error): return "listen: \(error)"
        }
    }
}
