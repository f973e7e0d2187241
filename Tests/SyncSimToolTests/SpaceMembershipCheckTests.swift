import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
@testable import SyncSimTool
import Testing

/// The simulator's space-membership check reports a device that still holds
/// what its user may no longer see: it can fail, and it names the record.
@Suite("sync-sim: the space-membership check")
struct SpaceMembershipCheckTests {
    /// A two-user run with one device of u2, set up by hand, and the shared list made by u1.
    static func run() async throws -> (SimulationRun, SimulatedDevice) {
        var configuration = SimulationConfiguration(seed: 1, devices: 2, steps: 0)
        configuration.users = 2
        let run = SimulationRun(configuration: configuration)
        let device = try await SimulatedDevice(name: "B", user: "u2", server: run.server, clock: run.clock, kinds: Simulation.kinds,
                                               checkpointThreshold: 0, jitterSeed: 1, log: run.log, sequence: run.counter,
                                               batchSize: 4, pullLimit: 5, policies: [:], followsSharedSpaces: true)
        run.devices = [device]
        try await run.server.change(.create(Simulation.sharedList, name: "Trip pins"), user: "u1")
        return (run, device)
    }

    @Test("a device that holds a shared list, with a row of it, that its user is not a member of is a space-membership violation")
    func strayRowIsReported() async throws {
        let (run, device) = try await Self.run()
        let store = try device.liveStore()
        // The device believes in a membership the server never gave: as a store that ignored a loss would.
        try await store.applySpaces(described: [Space(id: Simulation.sharedList, name: "Trip pins", role: .editor, members: [], version: 1)], lost: [])
        try await store.applyPulledPages([
            LocalStore.PulledKindPage(kind: "pin", rows: [ServerRow(kind: "pin", id: "p1", fields: ["name": .string("Tapas")], updatedAt: 5,
                                                                    space: Simulation.sharedList)],
                                      cursor: PullCursor(updatedAt: 5, id: "p1"), space: Simulation.sharedList),
        ])
        #expect(try await store.records("pin", in: Simulation.sharedList).map(\.id) == ["p1"])
        await run.checkSpaceMembership(device: 0)
        #expect(run.violation?.invariant == .spaceMembership)
        #expect(run.violation?.detail.contains("holds spaces") == true)
    }

    @Test("after the owner adds the user and the device syncs, the check holds; after a removal and a sync, it still holds")
    func syncedDeviceHolds() async throws {
        let (run, device) = try await Self.run()
        try await run.server.change(.setMember(Simulation.sharedList, user: "u2", role: .editor), user: "u1")
        try await device.sync()
        await run.checkSpaceMembership(device: 0)
        #expect(run.violation == nil)
        #expect(try await device.liveStore().spaces().map(\.id) == [Simulation.sharedList])
        try await run.server.change(.removeMember(Simulation.sharedList, user: "u2"), user: "u1")
        try await device.sync()
        await run.checkSpaceMembership(device: 0)
        #expect(run.violation == nil)
        #expect(try await device.liveStore().spaces().isEmpty)
    }
}
