import SyncJournal

/// One line of the list: what a note shows in the model version the app runs as.
public struct ListedNote: Sendable, Hashable {
    /// The note's id.
    public var id: String
    /// What the user wrote (version 2's `body`, version 1's `text`).
    public var text: String
    /// When the note was created, in milliseconds since 1970.
    public var created: Int64
    /// Whether the note is pinned; nil in version 1, which knows nothing of pins.
    public var pinned: Bool?
    /// The shared space the note is in, or ``SpaceID/personal`` for the user's own notes.
    public var space: SpaceID
    /// The name of the note's shared space (nil for the user's own notes).
    public var spaceName: String?
    /// The files on the note, by name.
    public var attachments: [ListedAttachment] = []

    /// A listed note with these values.
    public init(id: String, text: String, created: Int64, pinned: Bool? = nil,
                space: SpaceID = .personal, spaceName: String? = nil) {
        self.id = id
        self.text = text
        self.created = created
        self.pinned = pinned
        self.space = space
        self.spaceName = spaceName
    }

    /// How version 2 lists `note`.
    public init(_ note: Note) {
        self.init(id: note.id, text: note.body, created: note.created, pinned: note.pinned)
    }

    /// How version 1 lists `note`: with no pin.
    public init(_ note: NoteVersion1) {
        self.init(id: note.id, text: note.text, created: note.created, pinned: nil)
    }
}
