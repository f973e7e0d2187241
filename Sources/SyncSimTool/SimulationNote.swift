import SyncJournalStore

/// The note as the simulator's version-1 devices model it: the first release.
struct SimulationNote: SyncRecord, Equatable {
    static let kind = "note"
    var id: String
    var text: String
    var done: Bool
}
