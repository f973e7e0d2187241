/// What `notes list` shows: the notes in the list's order and the conflicts
/// waiting for the user.
public struct NotesSnapshot: Sendable, Hashable {
    /// The notes in the list's order: in version 2 pinned ones first, then
    /// oldest first (ties broken by id).
    public var notes: [ListedNote]
    /// Edits the server did not keep, in the order they were found.
    public var conflicts: [NoteConflict]
    /// Notes stored in a shape this version cannot read (another client wrote
    /// a field of another type), each as `note/ID at FIELD: reason`. Kept, never dropped.
    public var unreadable: [String]
    /// Edits the server will never take, oldest first: those queued in a
    /// shared space the user lost, or one where the user may only read.
    public var rejected: [RejectedNoteEdit]

    /// A snapshot of these notes and conflicts.
    public init(notes: [ListedNote], conflicts: [NoteConflict], unreadable: [String] = [],
                rejected: [RejectedNoteEdit] = []) {
        self.notes = notes
        self.conflicts = conflicts
        self.unreadable = unreadable
        self.rejected = rejected
    }

    /// The conflicts of one note.
    public func conflicts(of noteID: String) -> [NoteConflict] {
        conflicts.filter { $0.noteID == noteID }
    }

    /// Conflicts whose note is no longer listed (it was deleted on another device).
    public var conflictsOfMissingNotes: [NoteConflict] {
        let listed = Set(notes.map(\.id))
        return conflicts.filter { !listed.contains($0.noteID) }
    }
}
