import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// The nothing-lost invariant: every edit the store acknowledged is still
/// queued, was applied by the server, or is surfaced as a conflict or
/// rejection, or merged losing nothing (or was cancelled locally before it
/// ever left the device).
extension SimulationRun {
    func checkNothingLost(device: Int, state: StoreState) async {
        let queued = Set(state.outbox.operations.map(\.id))
        let surfaced = Set(state.conflicts.map(\.id)).union(state.rejections.map(\.operation.id))
        let replacements = Set(state.conflicts.compactMap { $0.resolution.replacement?.id })
        // Operations nobody made must not appear (a conflict policy's replacement may).
        for entry in state.outbox.operations where ledger[entry.id] == nil {
            statistics.invariantChecks += 1
            if replacements.contains(entry.id) {
                ledger[entry.id] = LedgerEntry(device: device, text: "\(name(device)) \(entry.operation.kind) \(entry.operation.entity) "
                    + "\(entry.operation.recordID) (queued by a conflict policy, step \(currentStep))",
                    step: currentStep, state: .open)
                openIDs[device].append(entry.id)
            } else {
                fail(.replayEqualsState, "\(name(device))'s outbox holds \(entry.operation.kind) \(entry.operation.entity) "
                    + "\(entry.operation.recordID), an operation the app never made")
                return
            }
        }
        var stillOpen: [OperationID] = []
        defer { openIDs[device] = stillOpen }
        for id in openIDs[device] {
            guard let entry = ledger[id] else { continue }
            statistics.invariantChecks += 1
            if case .cancelled(let sent) = entry.state {
                if queued.contains(id) {
                    fail(.replayEqualsState, "\(entry.text) was cancelled by a later edit, but it is queued again")
                    return
                }
                // Only an operation marked as possibly sent can have left the device.
                if sent {
                    if await log.wasReceived(id) {
                        fail(.noResurrection, "\(entry.text) was cancelled on the device by a later edit, but it reached the server")
                        return
                    }
                    stillOpen.append(id)
                }
                continue
            }
            var target = id
            var hops = 0
            while case .coalesced(let into)? = ledger[target]?.state, hops < 64 {
                target = into
                hops += 1
            }
            if queued.contains(target) {
                stillOpen.append(id)
                continue
            }
            var settled = surfaced.contains(target)
            if !settled { settled = await log.wasApplied(target) }
            // A merge that lost nothing is dismissed by the sync after its
            // merged fields went; when both syncs ran since the last check
            // (the free-running end), the store still remembers the outcome.
            if !settled, case .merged? = await devices[device].store?.rememberedOutcome(of: target) { settled = true }
            if settled {
                // One renamed or merged into another keeps that link: an
                // edit merged into it later still follows it to its fate.
                if case .coalesced = entry.state {} else { ledger[id]!.state = .settled }
                continue
            }
            if case .cancelled? = ledger[target]?.state {
                stillOpen.append(id)
                continue
            }
            fail(.nothingLost, "\(entry.text) was acknowledged, but it is not queued, the server never applied it, "
                + "and no conflict or rejection reports it")
            return
        }
    }
}
