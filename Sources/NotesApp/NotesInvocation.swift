import Foundation

/// A parsed `notes` command line: the action and the settings it runs with.
public struct NotesInvocation: Sendable, Hashable {
    /// What to do.
    public var action: NotesAction
    /// The device's journal directory (`--dir`).
    public var directory: String
    /// The sync server (`--server`); required by `sync` and `watch`.
    public var server: URL?
    /// The bearer token (`--token`, default `dev-token`).
    public var token: String
    /// The version of the app to run as (`--model-version`, default 2).
    public var modelVersion: NotesModelVersion

    /// An invocation with these values.
    public init(action: NotesAction, directory: String, server: URL?, token: String,
                modelVersion: NotesModelVersion = .current) {
        self.action = action
        self.directory = directory
        self.server = server
        self.token = token
        self.modelVersion = modelVersion
    }
}
