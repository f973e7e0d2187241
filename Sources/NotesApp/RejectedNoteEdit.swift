import SyncJournal

/// An edit of a note the server will never take (the user lost access to
/// the note's shared space, or may only read it), kept so the list can show
/// what was not kept and why.
public struct RejectedNoteEdit: Sendable, Hashable {
    /// The note's id.
    public var noteID: String
    /// What the edit did: `add`, `edit` or `rm`.
    public var edit: String
    /// The text the edit wrote, if it wrote one.
    public var text: String?
    /// Why the server will not take it.
    public var reason: String

    /// A rejected edit with these values.
    public init(noteID: String, edit: String, text: String?, reason: String) {
        self.noteID = noteID
        self.edit = edit
        self.text = text
        self.reason = reason
    }

    /// How the list shows `rejection`, an edit of a note.
    init(_ rejection: RejectionRecord) {
        let operation = rejection.operation
        let edit: String
        switch operation.kind {
        case .create: edit = "add"
        case .update: edit = "edit"
        case .delete: edit = "rm"
        }
        var text: String?
        if case .string(let value)? = operation.fields[NotesRepository.textField] { text = value }
        self.init(noteID: operation.recordID, edit: edit, text: text, reason: rejection.reason)
    }
}
