/// What a `notes` command line asks for.
public enum NotesAction: Sendable, Hashable {
    /// `add TEXT`: create a note.
    case add(text: String)
    /// `edit ID TEXT`: replace a note's text.
    case edit(id: String, text: String)
    /// `rm ID`: delete a note.
    case remove(id: String)
    /// `list [--json]`: print the notes.
    case list(json: Bool)
    /// `sync`: sync once with the server.
    case sync
    /// `watch [--json] [--interval SECONDS]`: keep syncing and print the list whenever it changes.
    case watch(json: Bool, intervalSeconds: Double)
}
