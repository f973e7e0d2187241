import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// The convergence invariant: once faults stop and every device's engine
/// has run on its own for a while, every device shows what the server holds
/// and every outbox is empty; the converged state also survives a restart.
extension SimulationRun {
    /// How often each device pulls while idle once faults stop.
    static let finalIdlePullMilliseconds: Int64 = 600_000

    func finish() async {
        for (index, device) in devices.enumerated() {
            if device.isDown {
                do { try await device.restart() } catch {
                    fail(.convergence, "\(name(index)) could not reopen its journal: \(error)")
                    return
                }
            }
            while device.isHolding { _ = try? await device.release() }
            await device.setOnline(true)
        }
        for kind in Simulation.kinds { for id in Simulation.pool[kind]! { await server.clearRecordFaults(kind: kind, id: id) } }
        for device in devices {
            guard let store = device.store else { continue }
            for entry in (try? await store.quarantinedOperations()) ?? [] { try? await store.retryQuarantined(entry.id) }
        }
        // After a restore, a device that has not met the restored server yet
        // does now, and reconciles as the app would (an engine on its own
        // stops at a changed server and waits for the app).
        if statistics.serverRestores > 0 {
            for index in devices.indices {
                statistics.syncs += 1
                _ = try? await devices[index].sync()
                if case .failed(.serverMismatch)? = devices[index].lastOutcome { await reconcile(device: index) }
                if violation != nil { return }
            }
        }
        // No sync is asked for by hand: every device runs its engine's own
        // schedule (a push once something is queued and any backoff has
        // passed, and a pull every ten minutes while idle) and the clock moves
        // on two hours. Timers fire in deadline order and each sync they start
        // ends before the next timer, so this repeats exactly; every device
        // pulls at least once after the last push of any other.
        for (index, device) in devices.enumerated() {
            do { try await device.startLive(idlePullMilliseconds: Self.finalIdlePullMilliseconds, changeWaits: device.waitsForChanges) } catch {
                fail(.convergence, "\(name(index)) could not start its engine: \(error)")
                return
            }
        }
        await clock.advance(by: .seconds(2 * 3_600))
        // Each device has a new engine since `startLive`: all its syncs are these.
        for device in devices { statistics.syncs += await device.engine?.syncsStarted ?? 0 }
        for (index, device) in devices.enumerated() {
            guard let status = await device.engine?.status else { continue }
            if case .online = status.connectivity { continue }
            fail(.convergence, "\(name(index))'s engine reports \(status.connectivity) after two hours without faults")
            return
        }
        await checkInvariants()
        for index in devices.indices { await checkSpaceMembership(device: index) }
        // Every file of every record shown opens now, downloaded where it is not here.
        for index in devices.indices { await checkAttachmentsAvailable(device: index, opening: true) }
        if violation != nil { return }
        for (index, device) in devices.enumerated() {
            guard let store = device.store else { continue }
            statistics.invariantChecks += 1
            let queued = (try? await store.outboxOperations()) ?? []
            if !queued.isEmpty {
                fail(.convergence, "\(name(index))'s outbox still holds \(queued.count) operation(s) after two syncs without faults: "
                    + queued.map { ScenarioRunner.describe($0.operation, sent: $0.sent, quarantined: $0.quarantined) }.joined(separator: ", "))
                return
            }
            // Every space the user sees: the personal one, and the shared list while a member.
            func line(_ space: SpaceID, _ id: String, _ fields: [String: FieldValue]) -> String {
                (space.isPersonal ? "" : "\(space)/") + "\(id) \(ScenarioValue.format(fields))"
            }
            for kind in Simulation.kinds {
                statistics.invariantChecks += 1
                let local = ((try? await store.records(kind)) ?? []).sorted { $0.space != $1.space ? $0.space < $1.space : $0.id < $1.id }
                    .map { line($0.space, $0.id, $0.fields) }
                let remote: [String]
                do throws(TransportError) {
                    remote = try await server.rows(kind: kind, user: device.user).sorted { $0.space != $1.space ? $0.space < $1.space : $0.id < $1.id }
                        .map { line($0.space, $0.id, $0.fields) }
                } catch {
                    fail(.server, "pulling the server's \(kind)s failed: \(error)")
                    return
                }
                if local != remote {
                    fail(.convergence, "\(name(index)) shows \(kind)s [\(local.joined(separator: "; "))] but the server holds [\(remote.joined(separator: "; "))]")
                    return
                }
            }
            // The converged state survives a restart: replay equals state.
            let before = await state(of: index)
            do { try await device.restart() } catch {
                fail(.replayEqualsState, "\(name(index)) could not reopen its journal at the end: \(error)")
                return
            }
            statistics.invariantChecks += 1
            if let before, let reopened = await state(of: index), reopened != before {
                fail(.replayEqualsState, "\(name(index))'s journal replays to a different state at the end: " + difference(before, reopened))
                return
            }
        }
    }
}
