import SyncJournalProtocol

extension Field {
    /// The field a model's property is stored as, named by key path, so a typo does not
    /// compile: `Field(\Note.createdAt).descending`.
    ///
    /// The name is the property's stored name, so a property renamed by a
    /// ``MigrationStep/renameField(_:to:)`` queries the field every version shares.
    /// The key path must name one of the model's own stored properties of a scalar
    /// type (a string, number, boolean, UUID, date or attachment, or an optional of one); any
    /// other key path is a programming error and stops the program, naming it.
    public init<Record: SyncRecord, Value: Encodable>(_ keyPath: KeyPath<Record, Value>) {
        self.init(RecordFieldReference(keyPath).storedName)
    }
}

/// A condition on a model's property, named by key path: `\Note.pinned == true`.
///
/// In a query made from the model (`Query(Note.self)`), a record stored before the
/// property was added reads its default, and the condition sees it the same way.
public func == <Record: SyncRecord, Value: Encodable>(keyPath: KeyPath<Record, Value>, value: Value) -> QueryCondition {
    RecordFieldReference(keyPath).condition(.equal, value)
}

/// A condition on a model's property: the stored value differs from `value`.
public func != <Record: SyncRecord, Value: Encodable>(keyPath: KeyPath<Record, Value>, value: Value) -> QueryCondition {
    RecordFieldReference(keyPath).condition(.notEqual, value)
}

/// A condition on a model's property: the stored value sorts before `value`.
public func < <Record: SyncRecord, Value: Encodable>(keyPath: KeyPath<Record, Value>, value: Value) -> QueryCondition {
    RecordFieldReference(keyPath).condition(.less, value)
}

/// A condition on a model's property: the stored value sorts before `value` or equals it.
public func <= <Record: SyncRecord, Value: Encodable>(keyPath: KeyPath<Record, Value>, value: Value) -> QueryCondition {
    RecordFieldReference(keyPath).condition(.lessOrEqual, value)
}

/// A condition on a model's property: the stored value sorts after `value`.
public func > <Record: SyncRecord, Value: Encodable>(keyPath: KeyPath<Record, Value>, value: Value) -> QueryCondition {
    RecordFieldReference(keyPath).condition(.greater, value)
}

/// A condition on a model's property: the stored value sorts after `value` or equals it.
public func >= <Record: SyncRecord, Value: Encodable>(keyPath: KeyPath<Record, Value>, value: Value) -> QueryCondition {
    RecordFieldReference(keyPath).condition(.greaterOrEqual, value)
}

/// A model's property as the store sees it: its stored name.
struct RecordFieldReference {
    let storedName: String

    init<Record: SyncRecord, Value: Encodable>(_ keyPath: KeyPath<Record, Value>) {
        guard let name = PropertyNameProbe.name(of: keyPath) else {
            preconditionFailure("\(keyPath) does not name a stored property of \(Record.self) of a scalar type; name the field with Field(\"name\")")
        }
        storedName = RecordSchema(Record.self).storedName(name)
    }

    /// `storedName` compared with `value`. A query made from the model sees older
    /// records upgraded (defaults filled in), so the condition needs no case of its own.
    func condition<Value: Encodable>(_ comparison: QueryCondition.Comparison, _ value: Value) -> QueryCondition {
        let encoded = (try? FieldValueEncoder().encodeValue(value)) ?? .null
        return QueryCondition(.compare(storedName, comparison, encoded))
    }
}
