import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// One reference server and one device per account, each engine following
/// the shared spaces its user is a member of, synced by hand (timers on a
/// manual clock that no test moves, so nothing runs unasked).
struct SharingScene {
    let server: ReferenceServer
    private let devices: [String: Device]

    /// A device for each of `users` in `dir`, syncing `kinds`, with pull pages of `pullLimit` rows.
    static func open(_ dir: TemporaryDirectory, users: [String], server: ReferenceServer = ReferenceServer(),
                     kinds: [String] = ["pin"], pullLimit: Int = 500) async throws -> SharingScene {
        var devices: [String: Device] = [:]
        for user in users {
            devices[user] = try await Device.open(dir.file("\(user).journal"), server: server, user: user, kinds: kinds,
                                                  pullLimit: pullLimit, syncClock: ManualClock(), followsSharedSpaces: true)
        }
        return SharingScene(server: server, devices: devices)
    }

    /// The device of `user`.
    subscript(user: String) -> Device { devices[user]! }

    /// A shared space `owner` creates through its engine, with each of
    /// `members` added in its role; the owner's device holds its description.
    func share(by owner: String, named name: String = "Weekend pins", with members: [String: SpaceRole]) async throws -> SpaceID {
        let engine = self[owner].engine
        let space = try await engine.createSpace(named: name).id
        for (user, role) in members.sorted(by: { $0.key < $1.key }) { try await engine.setMember(user, role: role, in: space) }
        return space
    }
}

/// The ids of the records of `kind` a store shows in `space`, in order.
func visibleIDs(_ store: LocalStore, in space: SpaceID, kind: String = "pin") async throws -> [String] {
    try await store.fetch(Query(kind).within(space)).map(\.id)
}

extension OperationOutcome {
    /// The rejection, for a `.rejected` outcome.
    var asRejected: RejectionRecord? { if case .rejected(let rejection) = self { return rejection } else { return nil } }
}

extension SyncOutcome {
    /// Whether the sync ended well.
    var endedWell: Bool { if case .ok = self { return true } else { return false } }
}
