/// A model type the store keeps as records of one kind: its stored properties are the
/// record's fields, encoded by ``FieldValueEncoder``.
///
/// The `id` property is the record id; it is not stored as a field. Each property's
/// coding key is its field name; `id` must keep the coding key `"id"`.
///
/// ```swift
/// struct Note: SyncRecord {
///     static let kind = "note"
///     var id: UUID
///     var title: String
///     var tags: Set<String>
/// }
/// ```
///
/// A model that changes between app versions declares its ``schemaVersion`` and the
/// ``migrations`` from each earlier one; see <doc:EvolvingYourModel>.
public protocol SyncRecord: Codable, Identifiable, Sendable where ID: SyncRecordID {
    /// The kind of the records this type is stored as (the server's table), for example `"note"`.
    static var kind: String { get }
    /// This model's version: 1 unless declared. Raise it when a version of the app
    /// changes the model in a way that needs a ``MigrationStep``.
    static var schemaVersion: Int { get }
    /// The steps from each earlier version, in order of ``RecordMigration/version``
    /// (none unless declared). Records are upgraded as they are read, never rewritten.
    static var migrations: [RecordMigration] { get }
}

extension SyncRecord {
    /// Version 1: a model that has not changed.
    public static var schemaVersion: Int { 1 }
    /// No migrations.
    public static var migrations: [RecordMigration] { [] }
}
