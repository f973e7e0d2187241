import SyncJournalStore

/// The note as the simulator's version-2 devices model it: `text` is called `body`,
/// and a note can be pinned (a field version 1 does not know).
struct SimulationNoteV2: SyncRecord, Equatable {
    static let kind = "note"
    static let schemaVersion = 2
    static let migrations = [RecordMigration(to: 2, [.renameField("text", to: "body"), .addField("pinned", default: false)])]
    var id: String
    var body: String
    var done: Bool
    var pinned: Bool
}
