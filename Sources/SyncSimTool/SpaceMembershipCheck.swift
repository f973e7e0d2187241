import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// The space-membership invariant, checked after every sync that pulled to
/// the end: no step changes a membership while a sync runs, so the server's
/// spaces now are the spaces at that pull. The device shows no record of a
/// shared space its user is not a member of, and holds the server's spaces
/// with the server's roles. (That a rejected edit is surfaced, a viewer's or
/// a removed member's, is the nothing-lost invariant's part.)
extension SimulationRun {
    func checkSpaceMembership(device: Int) async {
        guard configuration.users > 1, let store = devices[device].store else { return }
        let user = devices[device].user
        let members: [Space]
        do throws(TransportError) { members = try await server.spaces(user: user) } catch {
            fail(.server, "listing \(user)'s spaces failed: \(error)")
            return
        }
        let roles = Dictionary(members.map { ($0.id, $0.role) }, uniquingKeysWith: { first, _ in first })
        statistics.invariantChecks += 1
        let held = Dictionary(((try? await store.spaces()) ?? []).map { ($0.id, $0.role) }, uniquingKeysWith: { first, _ in first })
        if held != roles {
            fail(.spaceMembership, "after a whole pull \(name(device)) (\(user)) holds spaces \(describe(held)), but the server has \(describe(roles))")
            return
        }
        for kind in Simulation.kinds {
            statistics.invariantChecks += 1
            let records = (try? await store.records(kind)) ?? []
            if let stray = records.first(where: { !$0.space.isPersonal && roles[$0.space] == nil }) {
                fail(.spaceMembership, "after a whole pull \(name(device)) shows \(kind) \(stray.id) of space \(stray.space), "
                    + "which \(user) is not a member of")
                return
            }
        }
    }

    private func describe(_ roles: [SpaceID: SpaceRole]) -> String {
        roles.isEmpty ? "none" : roles.keys.sorted(by: <).map { "\($0) as \(roles[$0]!)" }.joined(separator: ", ")
    }
}
