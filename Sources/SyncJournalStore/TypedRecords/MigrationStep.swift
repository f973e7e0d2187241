import SyncJournalProtocol

/// One change a version of a ``SyncRecord`` type makes to the shape of the version
/// before it, applied when a record stored by an older version is read.
///
/// Steps never rewrite what is stored: a record keeps the fields its writers gave it,
/// and every device upgrades it in memory as it reads it. So a device on an older
/// version keeps reading the record as it always did, and a migration never becomes
/// an edit that could win a conflict against a user's.
///
/// ```swift
/// struct Book: SyncRecord {
///     static let kind = "book"
///     static let schemaVersion = 2
///     static let migrations = [
///         RecordMigration(to: 2, [
///             .renameField("author", to: "writer"),
///             .addField("rating", default: 0.0),
///             .convertField("year", from: String.self, to: Int.self) { Int($0) ?? 0 },
///         ]),
///     ]
///     var id: String
///     var writer: String
///     var rating: Double
///     var year: Int
/// }
/// ```
public struct MigrationStep: Sendable {
    /// What the step does, in the names of the version it leads to.
    package enum Action: Sendable {
        /// The property `to` reads and writes the stored field `from` had.
        case rename(from: String, to: String)
        /// A record without the field reads `value`.
        case add(String, FieldValue)
        /// The field is no longer read; records keep it for older versions.
        case drop(String)
        /// The field's value in the old shape becomes the new shape; nil leaves it as it is.
        case convert(String, @Sendable (FieldValue) -> FieldValue?)
        /// Any change over all the fields, for records an older version wrote.
        case custom(@Sendable (inout [String: FieldValue]) -> Void)
        /// A step that cannot be carried out (a default that does not encode), and why.
        case invalid(String)
    }

    package let action: Action

    private init(_ action: Action) { self.action = action }

    /// The property `newName` is what `name` was: it reads, writes and queries the
    /// same stored field, so devices on either version see one value.
    ///
    /// The field keeps its stored name forever: a rename changes only the property's
    /// name in this version's model, never the record on disk or on the server.
    public static func renameField(_ name: String, to newName: String) -> MigrationStep {
        MigrationStep(.rename(from: name, to: newName))
    }

    /// A new field: a record written before it existed (or by a version that does
    /// not know it) reads `value` for it.
    public static func addField(_ name: String, default value: FieldValue) -> MigrationStep {
        MigrationStep(.add(name, value))
    }

    /// A new field with a typed default, encoded as the record's properties are.
    public static func addField<Value: Encodable & Sendable>(_ name: String, default value: Value) -> MigrationStep {
        do {
            return MigrationStep(.add(name, try FieldValueEncoder().encodeValue(value)))
        } catch {
            return MigrationStep(.invalid("the default of \"\(name)\" does not encode: \(error)"))
        }
    }

    /// A field this version no longer reads. It stays stored, so devices on older
    /// versions keep it; its name is never given to another field.
    public static func dropField(_ name: String) -> MigrationStep {
        MigrationStep(.drop(name))
    }

    /// A field whose type changed: a value that decodes as `Old` but not as `New` is
    /// converted with `convert` when read. A value already of the new type is left
    /// alone, whoever wrote it, so the step is safe to run on any record.
    public static func convertField<Old: Decodable & Sendable, New: Codable & Sendable>(
        _ name: String, from old: Old.Type, to new: New.Type,
        _ convert: @escaping @Sendable (Old) -> New
    ) -> MigrationStep {
        MigrationStep(.convert(name) { value in
            let decoder = FieldValueDecoder()
            if (try? decoder.decode(New.self, fromValue: value)) != nil { return nil }
            guard let oldValue = try? decoder.decode(Old.self, fromValue: value) else { return nil }
            return try? FieldValueEncoder().encodeValue(convert(oldValue))
        })
    }

    /// A change over all the fields of a record, as named in the version this step
    /// belongs to, for records last written by an older version.
    ///
    /// A record that devices of both versions edit can hold fields either wrote, so
    /// write `transform` to fill what is missing and to leave fields already in the
    /// new shape alone.
    public static func custom(_ transform: @escaping @Sendable (inout [String: FieldValue]) -> Void) -> MigrationStep {
        MigrationStep(.custom(transform))
    }
}
