import SyncJournal

/// A note as version 1 of the app shows and stores it: a record of kind
/// `note` with the fields `text` and `created`. `notes --model-version 1`
/// reads and writes notes through this type only, as a device that has not
/// updated would, so it never reads or writes `pinned`: a pin set on a newer
/// device stays stored, untouched, under version 1's edits.
public struct NoteVersion1: SyncRecord, Sendable, Hashable {
    /// Notes are records of kind `note`, in every version.
    public static let kind = "note"

    /// The note's id, unique across devices.
    public var id: String
    /// What the user wrote.
    public var text: String
    /// When the note was created, in milliseconds since 1970.
    public var created: Int64

    /// A note with these values.
    public init(id: String, text: String, created: Int64) {
        self.id = id
        self.text = text
        self.created = created
    }
}
