import SyncJournalCommandLine

/// How `notes list` prints a snapshot: lines for people, or one JSON array.
enum NotesListing {
    /// The listing with its final newline: ``json(_:)`` or ``text(_:)``.
    static func render(_ snapshot: NotesSnapshot, json: Bool) -> String {
        json ? self.json(snapshot) + "\n" : text(snapshot)
    }

    /// One line per note, `ID  TEXT` (`ID  [pinned] TEXT` for a pinned note,
    /// `  (in NAME)` after the text of a shared space's note), in the list's
    /// order, each conflict in brackets after its note; a conflict of a note
    /// deleted elsewhere, a note that cannot be read, and an edit the server
    /// will never take (`ID  (not kept: …)`) get a line of their own.
    /// `(no notes)` when there is nothing to show.
    static func text(_ snapshot: NotesSnapshot) -> String {
        var lines: [String] = []
        for note in snapshot.notes {
            let shown = note.id + "  " + (note.pinned == true ? "[pinned] " : "") + oneLine(note.text)
                + (note.spaceName.map { "  (in \($0))" } ?? "")
                + (note.attachments.isEmpty ? "" : "  [files: " + note.attachments.map(describe).joined(separator: ", ") + "]")
            lines.append(([shown] + snapshot.conflicts(of: note.id).map(marker)).joined(separator: "  "))
        }
        for conflict in snapshot.conflictsOfMissingNotes {
            lines.append(conflict.noteID + "  (deleted on another device)  " + marker(conflict))
        }
        for unreadable in snapshot.unreadable {
            lines.append("(cannot read \(unreadable))")
        }
        for rejected in snapshot.rejected {
            lines.append(rejected.noteID + "  " + marker(rejected))
        }
        if lines.isEmpty { return "(no notes)\n" }
        return lines.map { $0 + "\n" }.joined()
    }

    /// One JSON array of `{"id":…,"text":…}` in the list's order; version 2
    /// adds `"pinned":true|false` (version 1 knows nothing of pins, so its
    /// objects keep the two keys it always printed). A note with conflicts
    /// also has `"conflicts":[{"shape":…,"lostText":…}]`, and a conflict that
    /// lost a pin or unpin `"lostPinned":true|false`. A note of a shared space
    /// has `"space":NAME`, a note with files `"attachments":[{"name","size",
    /// "type","sha256","local"}]` by name. After the notes, each edit the server will never
    /// take is one object `{"id":…,"text":…,"rejected":{"edit":…,"reason":…}}`
    /// (`text` only when the edit wrote one).
    static func json(_ snapshot: NotesSnapshot) -> String {
        let notes: [JSONText] = snapshot.notes.map { note in
            var members: [(String, JSONText)] = [("id", .string(note.id)), ("text", .string(note.text))]
            if let pinned = note.pinned { members.append(("pinned", .bool(pinned))) }
            if let space = note.spaceName { members.append(("space", .string(space))) }
            if !note.attachments.isEmpty {
                members.append(("attachments", .array(note.attachments.map { listed in
                    .object([("name", .string(listed.name)), ("size", .int(listed.attachment.size)),
                             ("type", .string(listed.attachment.mediaType)), ("sha256", .string(listed.attachment.content.hex)),
                             ("local", .bool(listed.isLocal))])
                })))
            }
            let conflicts = snapshot.conflicts(of: note.id)
            if !conflicts.isEmpty {
                members.append(("conflicts", .array(conflicts.map { conflict in
                    var fields: [(String, JSONText)] = [("shape", .string(conflict.shape)),
                                                        ("lostText", conflict.lostText.map(JSONText.string) ?? .null)]
                    if let pinned = conflict.lostPinned { fields.append(("lostPinned", .bool(pinned))) }
                    return .object(fields)
                })))
            }
            return .object(members)
        }
        let rejected: [JSONText] = snapshot.rejected.map { rejected in
            var members: [(String, JSONText)] = [("id", .string(rejected.noteID))]
            if let text = rejected.text { members.append(("text", .string(text))) }
            members.append(("rejected", .object([("edit", .string(rejected.edit)), ("reason", .string(rejected.reason))])))
            return .object(members)
        }
        return JSONText.array(notes + rejected).serialized
    }

    /// `NAME N bytes`, with `not here` when the file is not on this device.
    static func describe(_ listed: ListedAttachment) -> String {
        "\(listed.name) \(listed.attachment.size) bytes" + (listed.isLocal ? "" : " not here")
    }

    /// `(not kept: add "TEXT": REASON)`, `(not kept: edit "TEXT": REASON)` or `(not kept: rm: REASON)`.
    static func marker(_ rejected: RejectedNoteEdit) -> String {
        "(not kept: " + rejected.edit + (rejected.text.map { " \"\(oneLine($0))\"" } ?? "") + ": " + rejected.reason + ")"
    }

    /// `[conflict: your text "…" was not kept]`, `[conflict: your pin was not kept]`
    /// (or both, joined by "and"), or for a delete `[conflict: your delete was not kept]`.
    static func marker(_ conflict: NoteConflict) -> String {
        var lost: [String] = []
        if let text = conflict.lostText { lost.append("your text \"\(oneLine(text))\"") }
        if let pinned = conflict.lostPinned { lost.append(pinned ? "your pin" : "your unpin") }
        if lost.isEmpty { lost.append("your delete") }
        return "[conflict: \(lost.joined(separator: " and ")) \(lost.count == 1 ? "was" : "were") not kept]"
    }

    /// The text on one line (line breaks shown as spaces).
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}
