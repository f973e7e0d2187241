import SyncJournalCommandLine

/// How `notes list` prints a snapshot: lines for people, or one JSON array.
enum NotesListing {
    /// The listing with its final newline: ``json(_:)`` or ``text(_:)``.
    static func render(_ snapshot: NotesSnapshot, json: Bool) -> String {
        json ? self.json(snapshot) + "\n" : text(snapshot)
    }

    /// One line per note, `ID  TEXT` (`ID  [pinned] TEXT` for a pinned note),
    /// in the list's order, each conflict in brackets after its note; a conflict of a note deleted elsewhere, and a
    /// note that cannot be read, get a line of their own. `(no notes)` when
    /// there is nothing to show.
    static func text(_ snapshot: NotesSnapshot) -> String {
        var lines: [String] = []
        for note in snapshot.notes {
            lines.append(([note.id + "  " + (note.pinned == true ? "[pinned] " : "") + oneLine(note.text)] + snapshot.conflicts(of: note.id).map(marker)).joined(separator: "  "))
        }
        for conflict in snapshot.conflictsOfMissingNotes {
            lines.append(conflict.noteID + "  (deleted on another device)  " + marker(conflict))
        }
        for unreadable in snapshot.unreadable {
            lines.append("(cannot read \(unreadable))")
        }
        if lines.isEmpty { return "(no notes)\n" }
        return lines.map { $0 + "\n" }.joined()
    }

    /// One JSON array of `{"id":…,"text":…}` in the list's order; version 2
    /// adds `"pinned":true|false` (version 1 knows nothing of pins, so its
    /// objects keep the two keys it always printed). A note with conflicts
    /// also has `"conflicts":[{"shape":…,"lostText":…}]`, and a conflict that
    /// lost a pin or unpin `"lostPinned":true|false`.
    static func json(_ snapshot: NotesSnapshot) -> String {
        JSONText.array(snapshot.notes.map { note in
            var members: [(String, JSONText)] = [("id", .string(note.id)), ("text", .string(note.text))]
            if let pinned = note.pinned { members.append(("pinned", .bool(pinned))) }
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
        }).serialized
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
