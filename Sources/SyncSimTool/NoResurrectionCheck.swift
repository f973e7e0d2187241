import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// The no-resurrection invariant: a record a device deleted does not show
/// again there unless a later create (by anyone) brings it back or a conflict
/// explains it; a row the server deleted is not live again without a later create.
extension SimulationRun {
    /// On one device: its user's deletions stay deleted.
    func checkNoResurrection(device: Int, state: StoreState) async {
        // A rejected deletion (a viewer's, or a removed member's) explains the record as a conflict does.
        let surfaced = Set(state.conflicts.map(\.id)).union(state.rejections.map(\.operation.id))
        for key in deletions[device].keys.sorted(by: <) {
            let deletion = deletions[device][key]!
            statistics.invariantChecks += 1
            guard state.visibleFields(of: key) != nil else { continue }
            if surfaced.contains(deletion.operationID) { continue }
            if state.outbox[deletion.operationID]?.quarantined == true { continue }
            let creates = await log.creates(of: key)
            if creates.contains(where: { $0.device != name(device) && $0.sequence > deletion.sequence }) { continue }
            fail(.noResurrection, "\(name(device)) shows \(key.kind) \(key.id) again, which its user deleted at step \(deletion.step), "
                + "and no later create or conflict explains it")
            return
        }
    }

    /// On the server: a row whose last change was a delete is not live again
    /// (the personal rows, and the shared list's when there is one).
    func checkNoResurrectionOnServer() async {
        var keys = Simulation.kinds.flatMap { kind in Simulation.pool[kind]!.map { RecordKey(kind: kind, id: $0) } }
        if configuration.users > 1 { keys += Simulation.pool["pin"]!.map { RecordKey(kind: "pin", id: $0, space: Simulation.sharedList) } }
        for key in keys {
            statistics.invariantChecks += 1
            let live: Bool
            do throws(TransportError) {
                live = try await (key.space.isPersonal ? server.row(kind: key.kind, id: key.id) : server.row(key)) != nil
            } catch {
                fail(.server, "reading \(key.kind) \(key.id) from the server failed: \(error)")
                return
            }
            guard live else { continue }
            let (created, deleted) = await log.lastChanges(of: key)
            if let deleted, deleted > (created ?? Int.min) {
                let place = key.space.isPersonal ? "" : " in the shared list"
                fail(.noResurrection, "the server holds \(key.kind) \(key.id)\(place) live although its last change was a delete and nothing created it since")
            }
        }
    }
}
