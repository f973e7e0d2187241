/// What `sync-server`'s command line asks for (``SyncServerCommandLine/parse(_:)``).
///
/// ```swift
/// if case .run(let options) = try SyncServerCommandLine.parse(arguments) { try SyncServer(options: options).start() }
/// ```
public enum SyncServerInvocation: Sendable {
    /// `--help`: print ``SyncServerCommandLine/usage`` and exit 0.
    case help
    /// Serve with these options.
    case run(SyncServerOptions)
    /// `--new-identity`: give the database these options name a new
    /// identity (``SyncServer/replaceIdentity(options:)``), print it and exit 0.
    case newIdentity(SyncServerOptions)
}
