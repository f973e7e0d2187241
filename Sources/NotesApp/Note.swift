/// One note as version 2 of the app, the current one, shows and stores it:
/// its id, its body, when it was created (milliseconds since 1970 on the
/// device that wrote it), and whether it is pinned to the top of the list.
/// Stored as a record of kind `note` (see `Note+SyncRecord.swift`).
///
/// Version 1 called the body `text` and had no pin (``NoteVersion1``). The
/// body is still stored in the field `text`, so a device still on version 1
/// reads and edits the same value; a note version 1 wrote reads unpinned.
public struct Note: Sendable, Hashable, Codable {
    /// The note's id, unique across devices.
    public var id: String
    /// What the user wrote (stored as `text`, its name in version 1).
    public var body: String
    /// When the note was created, in milliseconds since 1970.
    public var created: Int64
    /// Whether the list shows the note above the unpinned ones.
    public var pinned: Bool

    /// A note with these values.
    public init(id: String, body: String, created: Int64, pinned: Bool = false) {
        self.id = id
        self.body = body
        self.created = created
        self.pinned = pinned
    }
}
