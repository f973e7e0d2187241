/// A file operation of ``SQLiteStorage``'s attachment store that failed:
/// what was done, to which file, and the system's reason.
///
/// ```swift
/// let error = AttachmentFileError(operation: "fsync", path: "/srv/sync.sqlite.attachments/uploads/x", reason: "EIO")
/// print(error)   // attachment store: fsync /srv/…: EIO
/// ```
public struct AttachmentFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was done (`open`, `write`, `fsync`, `rename`, …).
    public let operation: String
    /// The file or directory.
    public let path: String
    /// The system's reason (the errno's name).
    public let reason: String

    /// A failure of `operation` on `path` for `reason`.
    ///
    /// ```swift
    /// let error = AttachmentFileError(operation: "rename", path: path, reason: "EXDEV")
    /// ```
    public init(operation: String, path: String, reason: String) {
        self.operation = operation
        self.path = path
        self.reason = reason
    }

    /// `attachment store: OPERATION PATH: REASON`.
    public var description: String { "attachment store: \(operation) \(path): \(reason)" }
}
