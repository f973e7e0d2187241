import SyncJournalProtocol
import SyncJournalStore

/// The checks after every step: each device's store is readable, then each
/// invariant's checker in turn, stopping at the first violation.
extension SimulationRun {
    func checkInvariants() async {
        for device in devices.indices {
            guard let store = devices[device].store, let state = try? await store.currentState() else {
                fail(.replayEqualsState, "\(name(device))'s store cannot be read (status \(await devices[device].statusName()))")
                return
            }
            await checkNothingLost(device: device, state: state)
            await checkNoResurrection(device: device, state: state)
            await checkAttachmentsKept(device: device, state: state)
            if violation != nil { return }
        }
        await checkNoDoubleApply()
        await checkNoResurrectionOnServer()
    }
}
