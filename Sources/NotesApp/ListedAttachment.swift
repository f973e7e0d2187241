import SyncJournal

/// One file on a listed note: its name on the note, the attachment, and
/// whether its bytes are on this device (else `notes attachment` downloads them).
public struct ListedAttachment: Sendable, Hashable {
    /// The file's name on the note.
    public var name: String
    /// The content's hash, size and media type.
    public var attachment: Attachment
    /// Whether the file is on this device.
    public var isLocal: Bool

    /// A listed attachment.
    public init(name: String, attachment: Attachment, isLocal: Bool) {
        self.name = name
        self.attachment = attachment
        self.isLocal = isLocal
    }
}
