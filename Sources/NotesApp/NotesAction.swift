import SyncJournal

/// What a `notes` command line asks for.
public enum NotesAction: Sendable, Hashable {
    /// `add TEXT [--space SPACE]`: create a note, in the shared space named
    /// (by name or id) or else in the user's own notes.
    case add(text: String, space: String?)
    /// `edit ID TEXT`: replace a note's text.
    case edit(id: String, text: String)
    /// `pin ID` (`pinned` true) or `unpin ID`: show a note above the others,
    /// or no longer (model version 2 only).
    case pin(id: String, pinned: Bool)
    /// `rm ID`: delete a note.
    case remove(id: String)
    /// `list [--json]`: print the notes.
    case list(json: Bool)
    /// `sync`: sync once with the server.
    case sync
    /// `reconcile`: after the server changed (reset, swapped or restored),
    /// upload every note it lacks, then sync with it from the start.
    case reconcile
    /// `status [--json]`: sync once, then print the sync status (whether the
    /// server answered, what waits to be sent, conflicts, the last good sync).
    case status(json: Bool)
    /// `watch [--json] [--interval SECONDS]`: run the sync engine, print the
    /// list whenever it changes and the sync status whenever the server's
    /// reachability changes. The engine pulls when the server announces
    /// changes and, for a server that does not, every `intervalSeconds` while idle.
    case watch(json: Bool, intervalSeconds: Double)
    /// `space create NAME`: create a shared space with the user as its owner.
    case spaceCreate(name: String)
    /// `space add SPACE USER --role ROLE`: add a member to a shared space, or
    /// change a member's role (owners only).
    case spaceAdd(space: String, user: String, role: SpaceRole)
    /// `space remove SPACE USER`: remove a member (owners may remove anyone,
    /// a member themselves).
    case spaceRemove(space: String, user: String)
    /// `space list [--json]`: the user's shared spaces, their members and
    /// roles (asked of the server when `--server` is given).
    case spaceList(json: Bool)
    /// `attach ID FILE [--type MEDIA]`: add a file to a note, under its file
    /// name (the media type guessed from its extension unless given).
    case attach(id: String, file: String, mediaType: String?)
    /// `attachment ID NAME --out PATH`: write a note's file to PATH,
    /// downloading it from the server (`--server`) when it is not on this device.
    case writeAttachment(id: String, name: String, output: String)
}
