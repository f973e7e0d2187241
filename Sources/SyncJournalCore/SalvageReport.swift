/// What a salvage of a damaged journal copied into the new journal.
///
/// ```swift
/// import SyncJournal
///
/// func rescue(_ path: String) async throws {
///     let report = try await LocalStore.salvage(path: path, to: path + ".salvaged", includeRecordsAfterDamage: true)
///     print(report.sourceStatus, report.prefixRecords, report.recordsAfterDamage)
/// }
/// ```
public struct SalvageReport: Sendable, Hashable {
    /// How the source was found.
    public var sourceStatus: JournalStatus
    /// Records of the valid prefix, copied as they were.
    public var prefixRecords: Int
    /// Valid records found after the damage, copied wrapped in records that
    /// nothing replays, for a person to inspect (`journal-dump` shows them).
    public var recordsAfterDamage: Int
    /// The new journal's header.
    package var header: JournalHeader
    /// Whether the source's header was damaged, so the records were read
    /// under a header rebuilt from them (the generation most of them agree
    /// on, and the first record's sequence number).
    public var headerRebuilt: Bool = false
}
