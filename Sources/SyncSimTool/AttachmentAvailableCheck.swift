import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// The attachment-available invariant, checked after every sync that pulled
/// to the end and at the end of the run: every file of a record the device
/// shows is on its disk, or the server holds the content for the device's
/// user, so the user can always open it. At the end (`opening`) every such
/// file is opened too: downloaded where it is not here, with the right bytes.
/// A content a restore of the server's database took away is checked only
/// then, once every device has reconciled and could upload it again.
extension SimulationRun {
    func checkAttachmentsAvailable(device: Int, opening: Bool = false) async {
        guard configuration.faults.contains(.attachments), !devices[device].offline,
              let store = devices[device].store, let state = try? await store.currentState() else { return }
        let held = heldFiles(device: device)
        let user = devices[device].user
        for key in Self.keysWithFiles(in: state) {
            guard let fields = state.visibleFields(of: key) else { continue }
            if opening {
                await openFiles(device: device, key: key, fault: .none, afterCalls: 0)
                if violation != nil { return }
            }
            for field in fields.keys.sorted() {
                for attachment in fields[field]!.attachments {
                    statistics.invariantChecks += 1
                    if held.contains(attachment.content.hex) { continue }
                    // Taken away by a restore: another device may bring it back when it reconciles.
                    if !opening, contentsLostInRestores.contains(attachment.content) { continue }
                    let stored: Bool
                    do throws(TransportError) { stored = try await server.holds(attachment, user: user) } catch {
                        fail(.server, "asking the server for \(attachment) failed: \(error)")
                        return
                    }
                    if stored { continue }
                    let place = key.space.isPersonal ? "" : " in the shared list"
                    fail(.attachmentAvailable, "after a whole sync \(name(device)) shows \(key.kind) \(key.id)\(place) with \(field) \(attachment), "
                        + "which is neither on the device nor held by the server for \(user)")
                    return
                }
            }
        }
    }
}
