import SyncJournalProtocol

extension FieldValue {
    /// What to store for a field an edit of a typed record changed: `after`, the encoding of
    /// the edited copy, except that every part the edit left as it was read keeps its
    /// stored form.
    ///
    /// Decoding is not always reversible: an unknown enum value reads as the unknown case, a
    /// whole double as an `Int`, a member of a nested object this version does not declare is
    /// dropped. Without this, changing one member of a nested struct would also overwrite
    /// those parts of the field with this version's reading of them. A part is left as it
    /// was read when `before` (the encoding of the copy read) equals `after` there.
    ///
    /// Objects are compared member by member; arrays element by element only when the
    /// stored, read and edited arrays have the same length (otherwise their positions do
    /// not correspond and `after` is taken whole). A member that neither `before` nor
    /// `after` has, but the stored object has, is kept.
    ///
    /// - Parameters:
    ///   - stored: the field as the record holds it, nil when it has no such field.
    ///   - before: the field in the encoding of the copy the app read, nil when absent.
    ///   - after: the field in the encoding of the edited copy.
    package static func keepingUntouchedParts(stored: FieldValue?, before: FieldValue?, after: FieldValue) -> FieldValue {
        guard let stored, let before else { return after }
        if before == after { return stored }
        switch (stored, before, after) {
        case (.object(let storedMembers), .object(let beforeMembers), .object(let afterMembers)):
            var merged: [String: FieldValue] = [:]
            for (name, value) in afterMembers {
                merged[name] = keepingUntouchedParts(stored: storedMembers[name], before: beforeMembers[name], after: value)
            }
            // Members this version never read are another version's; the edit cannot have meant them.
            for (name, value) in storedMembers where beforeMembers[name] == nil && afterMembers[name] == nil {
                merged[name] = value
            }
            return .object(merged)
        case (.array(let storedElements), .array(let beforeElements), .array(let afterElements))
            where storedElements.count == beforeElements.count && beforeElements.count == afterElements.count:
            return .array(afterElements.indices.map {
                keepingUntouchedParts(stored: storedElements[$0], before: beforeElements[$0], after: afterElements[$0])
            })
        default:
            return after
        }
    }
}
