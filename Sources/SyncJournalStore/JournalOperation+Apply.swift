import SyncJournalProtocol

extension JournalOperation {
    /// Applies this edit to a record's visible fields (nil: no visible record): a create
    /// sets them, an update merges its changes into a visible record, a delete removes it.
    package func apply(to fields: inout [String: FieldValue]?) {
        switch kind {
        case .create: fields = self.fields
        case .update: if fields != nil { fields!.merge(self.fields) { _, new in new } }
        case .delete: fields = nil
        }
    }
}
