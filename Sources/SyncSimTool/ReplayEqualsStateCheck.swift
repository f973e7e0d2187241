import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// The replay-equals-state invariant: after a crash, the reopened journal
/// replays to the state before it.
extension SimulationRun {
    func restartAndCompare(device: Int, expected: StoreState?, what: String) async {
        statistics.crashes += 1
        do { try await devices[device].restart() } catch {
            fail(.replayEqualsState, "\(name(device)) could not reopen its journal after \(what): \(error)")
            return
        }
        let status = await devices[device].statusName()
        guard status == "ok" else {
            fail(.replayEqualsState, "\(name(device))'s journal reopened \(status) after \(what)")
            return
        }
        guard let expected, let reopened = await state(of: device) else { return }
        statistics.invariantChecks += 1
        if reopened != expected {
            fail(.replayEqualsState, "after \(what), \(name(device))'s journal replays to a different state: " + difference(expected, reopened))
        }
    }

    /// A short description of how two states differ.
    func difference(_ expected: StoreState, _ actual: StoreState) -> String {
        var parts: [String] = []
        func rows(_ state: StoreState) -> [String] {
            state.snapshot.values.sorted { $0.key < $1.key }.map { "\($0.kind) \($0.id)@\($0.updatedAt)" }
        }
        func outbox(_ state: StoreState) -> [String] {
            state.outbox.operations.map { "\($0.operation.kind) \($0.operation.entity) \($0.operation.recordID)" + ($0.sent ? " (sent)" : "") }
        }
        if expected.snapshot != actual.snapshot { parts.append("rows \(rows(expected)) became \(rows(actual))") }
        if expected.outbox.operations != actual.outbox.operations {
            if outbox(expected) != outbox(actual) {
                parts.append("outbox \(outbox(expected)) became \(outbox(actual))")
            } else if let (was, now) = zip(expected.outbox.operations, actual.outbox.operations).first(where: { $0.0 != $0.1 }) {
                func entry(_ e: OutboxOperation) -> String {
                    "attempts \(e.attempts), permanent failures \(e.permanentFailures), quarantined \(e.quarantined), "
                        + "last error \(e.lastError ?? "none"), base \(e.operation.baseUpdatedAt.map(String.init) ?? "none"), "
                        + "fields \(ScenarioValue.format(e.operation.fields))"
                }
                parts.append("queued \(was.operation.kind) \(was.operation.entity) \(was.operation.recordID) had \(entry(was)), now \(entry(now))")
            }
        }
        if expected.cursors != actual.cursors {
            parts.append("cursors \(expected.cursors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }) became "
                + "\(actual.cursors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })")
        }
        if expected.conflicts != actual.conflicts { parts.append("\(expected.conflicts.count) conflicts became \(actual.conflicts.count)") }
        if expected.baseRows != actual.baseRows { parts.append("base rows differ") }
        if expected.rejections != actual.rejections { parts.append("rejections differ") }
        return parts.isEmpty ? "(states differ)" : parts.joined(separator: "; ")
    }
}
