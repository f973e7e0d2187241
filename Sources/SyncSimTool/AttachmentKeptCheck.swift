import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// The attachment-kept-until-uploaded invariant, checked after every step
/// and at the end: a file a device attached is on its disk, or the server
/// holds the content for the device's user, as long as an edit of the
/// device still queued refers to it. Until the server has a content, the
/// device's file is its only copy: losing it loses the edit's file for good.
extension SimulationRun {
    func checkAttachmentsKept(device: Int, state: StoreState) async {
        guard configuration.faults.contains(.attachments), let attached = attachedContents[device], !attached.isEmpty else { return }
        let held = heldFiles(device: device)
        var owed: [ContentHash: (attachment: Attachment, entry: OutboxOperation)] = [:]
        for entry in state.outbox.operations where entry.operation.kind != .delete {
            for field in entry.operation.fields.keys.sorted() {
                for attachment in entry.operation.fields[field]!.attachments where attached.contains(attachment.content) && owed[attachment.content] == nil {
                    owed[attachment.content] = (attachment, entry)
                }
            }
        }
        let user = devices[device].user
        for content in owed.keys.sorted(by: <) {
            statistics.invariantChecks += 1
            if held.contains(content.hex) { continue }
            let (attachment, entry) = owed[content]!
            let stored: Bool
            do throws(TransportError) { stored = try await server.holds(attachment, user: user) } catch {
                fail(.server, "asking the server for \(attachment) failed: \(error)")
                return
            }
            if stored { continue }
            let place = entry.key.space.isPersonal ? "" : " in the shared list"
            fail(.attachmentKeptUntilUploaded, "\(name(device)) no longer holds the file \(attachment) that its queued "
                + "\(entry.operation.kind) of \(entry.key.kind) \(entry.key.id)\(place) refers to, and the server does not hold it for \(user)")
            return
        }
    }
}
