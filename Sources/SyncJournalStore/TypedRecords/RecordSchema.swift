import SyncJournalProtocol

/// A ``SyncRecord`` type's migrations, worked out once: which stored field each
/// property reads, the defaults of added fields, and the walk that upgrades a
/// stored record to the current shape.
///
/// Stored names are stable: a field keeps the name it had when it first appeared,
/// whatever later versions call the property. That is how a rename travels between
/// devices on different versions: it does not travel at all, so a record never
/// disappears from a version that uses the other name.
///
/// A class, shared by every query that carries it: copying a query copies a reference.
package final class RecordSchema: Sendable, Hashable {
    /// The kind the type is stored as.
    package let kind: String
    /// The type's current version.
    package let version: Int
    /// The migrations, by version.
    package let migrations: [RecordMigration]
    /// The stored name of each property whose name differs from it.
    package let storedNames: [String: String]
    /// The default of each added field, by current name.
    package let defaults: [String: FieldValue]
    /// Why the declared migrations cannot be carried out, or nil.
    package let problem: String?

    /// The schema of `type`.
    package convenience init<Record: SyncRecord>(_ type: Record.Type) {
        self.init(kind: Record.kind, version: Record.schemaVersion, migrations: Record.migrations)
    }

    /// The schema of a type stored as `kind`, at `version`, with `migrations`.
    package init(kind: String, version: Int, migrations: [RecordMigration]) {
        self.kind = kind
        self.version = version
        self.migrations = migrations
        var names: [String: String] = [:]
        var defaults: [String: FieldValue] = [:]
        var retired: Set<String> = []
        var problem: String?
        func fail(_ reason: String) { if problem == nil { problem = reason } }
        if version < 1 { fail("schemaVersion \(version) is below 1") }
        var previous = 1
        for migration in migrations {
            if migration.version <= previous || migration.version > version {
                fail("the migration to version \(migration.version) is out of order (after \(previous), up to \(version))")
            }
            previous = max(previous, migration.version)
            for step in migration.steps {
                switch step.action {
                case .rename(let from, let to):
                    let stored = names[from] ?? from
                    if from == to { fail("\"\(from)\" is renamed to itself") }
                    if stored != to, retired.contains(to) || (names.values.contains(to) && names[to] == nil) {
                        fail("\"\(to)\" was a stored field's name; renaming \"\(from)\" to it would mix two fields")
                    }
                    names[from] = nil
                    retired.insert(from)
                    retired.remove(to)
                    if stored != to { names[to] = stored } else { names[to] = nil }
                    if let value = defaults.removeValue(forKey: from) { defaults[to] = value }
                case .add(let name, let value):
                    if retired.contains(name) || names.values.contains(name) {
                        fail("\"\(name)\" is still the stored name of an earlier field; an added field needs a name never used")
                    }
                    defaults[name] = value
                case .drop(let name):
                    retired.insert(names[name] ?? name)
                    retired.insert(name)
                    names[name] = nil
                    defaults[name] = nil
                case .convert, .custom:
                    break
                case .invalid(let reason):
                    fail(reason)
                }
            }
        }
        self.storedNames = names
        self.defaults = defaults
        self.problem = problem.map { "the migrations of \(kind): \($0)" }
    }

    /// Schemas compare by what can be compared: two with the same kind, version,
    /// names and defaults are taken as one (steps are closures).
    package static func == (a: RecordSchema, b: RecordSchema) -> Bool {
        a.kind == b.kind && a.version == b.version && a.storedNames == b.storedNames && a.defaults == b.defaults
            && a.problem == b.problem && a.migrations.count == b.migrations.count
    }

    /// Hashes the parts ``==`` compares.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(version)
        hasher.combine(storedNames)
        hasher.combine(migrations.count)
    }

    /// A stored record's fields upgraded to this version's shape but named as
    /// stored, which is how queries name fields: what a query of this model sees.
    package func queryView(_ stored: [String: FieldValue], writtenAt: Int?) -> [String: FieldValue] {
        if migrations.isEmpty { return stored }
        return self.stored(upgrade(stored, writtenAt: writtenAt))
    }

    /// Whether reading needs the walk at all: a type with no migrations reads its fields as stored.
    package var isIdentity: Bool { migrations.isEmpty }

    /// The stored name of the property or field `name`.
    package func storedName(_ name: String) -> String { storedNames[name] ?? name }

    /// `fields`, named as this version's properties, under their stored names.
    package func stored(_ fields: [String: FieldValue]) -> [String: FieldValue] {
        if storedNames.isEmpty { return fields }
        var stored: [String: FieldValue] = [:]
        stored.reserveCapacity(fields.count)
        for (name, value) in fields { stored[storedName(name)] = value }
        return stored
    }

    /// A stored record's fields upgraded to this version's shape, named as its
    /// properties. `writtenAt` is the highest model version that wrote the record
    /// (nil: none said, taken as 1); custom steps run only for records older than
    /// their migration, every other step on every record.
    package func upgrade(_ stored: [String: FieldValue], writtenAt: Int?) -> [String: FieldValue] {
        if migrations.isEmpty { return stored }
        let writer = writtenAt ?? 1
        var fields = stored
        for migration in migrations {
            for step in migration.steps {
                switch step.action {
                case .rename(let from, let to):
                    if let value = fields.removeValue(forKey: from) { fields[to] = value }
                case .add(let name, let value):
                    if fields[name] == nil { fields[name] = value }
                case .drop(let name):
                    fields[name] = nil
                case .convert(let name, let convert):
                    if let value = fields[name], let converted = convert(value) { fields[name] = converted }
                case .custom(let transform):
                    if writer < migration.version { transform(&fields) }
                case .invalid:
                    break
                }
            }
        }
        return fields
    }
}
