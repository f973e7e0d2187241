/// One note as the app shows it and stores it: its id, its text, and when it
/// was created (milliseconds since 1970 on the device that wrote it), which
/// orders the list. Stored as a record of kind `note` (see `Note+SyncRecord.swift`):
/// `text` and `created` are its fields, `id` its record id.
public struct Note: Sendable, Hashable, Codable {
    /// The note's id, unique across devices.
    public var id: String
    /// What the user wrote.
    public var text: String
    /// When the note was created, in milliseconds since 1970.
    public var created: Int64

    /// A note with these values.
    public init(id: String, text: String, created: Int64) {
        self.id = id
        self.text = text
        self.created = created
    }
}
