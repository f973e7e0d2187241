/// A text edit of a note that the server did not keep: another device's edit
/// reached it first. The list shows it next to the note until the user edits
/// or deletes the note again.
public struct NoteConflict: Sendable, Hashable {
    /// The note's id.
    public var noteID: String
    /// The text this device wrote and the server did not keep; `nil` when the
    /// refused edit was a delete or kept its text.
    public var lostText: String?
    /// The pin (true) or unpin (false) this device made and the server did
    /// not keep; `nil` when the refused edit did not change the pin.
    public var lostPinned: Bool?
    /// What clashed, such as `update/update` (this device updated, the server
    /// had an update too) or `update/delete`.
    public var shape: String

    /// A conflict with these values.
    public init(noteID: String, lostText: String?, lostPinned: Bool? = nil, shape: String) {
        self.noteID = noteID
        self.lostText = lostText
        self.lostPinned = lostPinned
        self.shape = shape
    }
}
