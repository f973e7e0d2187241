import SyncJournalCommandLine

/// How `notes list` prints a snapshot: lines for people, or one JSON array.
enum NotesListing {
    /// The listing with its final newline: ``json(_:)`` or ``text(_:)``.
    static func render(_ snapshot: NotesSnapshot, json: Bool) -> String {
        json ? self.json(snapshot) + "\n" : text(snapshot)
    }

    /// One line per note, `ID  TEXT`, oldest first, each conflict in
    /// brackets after its note; a conflict of a note deleted elsewhere, and a
    /// note that cannot be read, get a line of their own. `(no notes)` when
    /// there is nothing to show.
    static func text(_ snapshot: NotesSnapshot) -> String {
        var lines: [String] = []
        for note in snapshot.notes {
            lines.append(([note.id + "  " + oneLine(note.text)] + snapshot.conflicts(of: note.id).map(marker)).joined(separator: "  "))
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

    /// One JSON array of `{"id":…,"text":…}`, oldest first; a note with
    /// conflicts also has `"conflicts":[{"shape":…,"lostText":…}]`.
    static func json(_ snapshot: NotesSnapshot) -> String {
        JSONText.array(snapshot.notes.map { note in
            var members: [(String, JSONText)] = [("id", .string(note.id)), ("text", .string(note.text))]
            let conflicts = snapshot.conflicts(of: note.id)
            if !conflicts.isEmpty {
                members.append(("conflicts", .array(conflicts.map { conflict in
                    .object([("shape", .string(conflict.shape)), ("lostText", conflict.lostText.map(JSONText.string) ?? .null)])
                })))
            }
            return .object(members)
        }).serialized
    }

    /// `[conflict: your text "…" was not kept]`, or for a delete `[conflict: your delete was not kept]`.
    static func marker(_ conflict: NoteConflict) -> String {
        let lost = conflict.lostText.map { "your text \"\(oneLine($0))\"" } ?? "your delete"
        return "[conflict: \(lost) was not kept]"
    }

    /// The text on one line (line breaks shown as spaces).
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}
