import SyncJournalProtocol
/// The compactor's rules, as a pure function of the queue and a new edit
/// (removals go per id; a create already in flight is never cancelled locally):
///
/// - create never sent + delete → both vanish; nothing reaches the server;
/// - create sent (in flight now, or at any time before, even before a crash)
///   + delete → the delete stays queued, to be sent after the create's outcome;
/// - create never sent + update → one create with the merged fields;
/// - update + update, neither sent → one update with the merged changes and the
///   first update's base;
/// - update never sent + delete → one delete carrying the update's base;
/// - a merged operation carries the highest model version of the edits merged;
/// - an operation that was sent is never merged into or removed, so edits made
///   while a request is in flight queue behind it.
///
/// "Sent" is the durable flag recorded before an operation is first handed to
/// a transport; an operation in flight is always sent, so the rules can be
/// decided from the journal alone and replay reaches the same queue.
package enum Compactor {
    /// The steps that compact `edit`, just appended to `outbox`, with the
    /// queued operations on the same record.
    package static func steps(for edit: JournalOperation, in outbox: Outbox) -> [CompactionStep] {
        steps(for: edit, after: outbox.operations(on: edit.key).filter { $0.id != edit.id })
    }

    /// The steps that compact `edit` given `earlier`, the operations queued
    /// before it on the same record, in order.
    package static func steps(for edit: JournalOperation, after earlier: [OutboxOperation]) -> [CompactionStep] {
        guard let previous = earlier.last, !previous.sent else { return [] }
        let prior = previous.operation
        switch (prior.kind, edit.kind) {
        case (.create, .update), (.update, .update):
            var merged = prior
            merged.fields.merge(edit.fields) { _, new in new }
            // The merged edit says the newest model that wrote any part of it.
            merged.modelVersion = JournalOperation.highestModelVersion(prior.modelVersion, edit.modelVersion)
            return [.replace(prior.id, with: merged), .remove(edit.id)]
        case (.create, .delete):
            return [.remove(prior.id), .remove(edit.id)]
        case (.update, .delete):
            var delete = edit
            delete.baseUpdatedAt = prior.baseUpdatedAt
            delete.modelVersion = JournalOperation.highestModelVersion(prior.modelVersion, edit.modelVersion)
            var steps: [CompactionStep] = [.remove(prior.id)]
            if delete != edit { steps.append(.replace(edit.id, with: delete)) }
            // With the update gone, an unsent create before it may now meet the delete.
            if earlier.count >= 2, !earlier[earlier.count - 2].sent, earlier[earlier.count - 2].operation.kind == .create {
                return [.remove(earlier[earlier.count - 2].id), .remove(prior.id), .remove(edit.id)]
            }
            return steps
        default:
            return []
        }
    }
}
