/// Which build of the app `notes` runs as (`--model-version`): each reads and
/// writes notes through its own model type, as two releases of a real app would.
public enum NotesModelVersion: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The first release: ``NoteVersion1``, with `text` and no pin.
    case version1 = 1
    /// The current release: ``Note``, with `body` (stored as `text`) and `pinned`.
    case version2 = 2

    /// The version `notes` runs as unless told otherwise.
    public static let current = NotesModelVersion.version2

    /// The version named by `--model-version`'s value (`1` or `2`), or nil.
    public init?(argument: String) {
        guard let number = Int(argument), let version = NotesModelVersion(rawValue: number) else { return nil }
        self = version
    }

    /// Whether this version's notes can be pinned.
    public var hasPins: Bool { self == .version2 }

    /// `version 1` or `version 2`.
    public var description: String { "version \(rawValue)" }
}
