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
public protocol SyncRecord: Codable, Identifiable, Sendable where ID: SyncRecordID {
    /// The kind of the records this type is stored as (the server's table), for example `"note"`.
    static var kind: String { get }
}
