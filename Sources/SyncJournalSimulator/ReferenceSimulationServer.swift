import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// The simulator's default server: the in-memory ``ReferenceServer``, user u1.
struct ReferenceSimulationServer: SimulationServer {
    let server = ReferenceServer()

    var summary: String { "" }
    var isDeterministic: Bool { true }
    var hasRecordFaults: Bool { true }

    func transport(device: String) -> any SyncTransport { server.transport(user: "u1") }
    func appliedMutations() async -> Int? { await server.appliedMutations }
    func tick(_ milliseconds: Int64) async { await server.tick(milliseconds) }
    func row(kind: String, id: String) async throws(TransportError) -> ServerRow? { await server.row(kind: kind, id: id) }
    func rows(kind: String) async throws(TransportError) -> [ServerRow] { await server.rows(user: "u1", kind: kind) }

    func write(kind: String, id: String, fields: [String: FieldValue]) async throws(TransportError) -> Bool {
        _ = await server.write(user: "u1", kind: kind, id: id, fields: fields)
        return true
    }

    func update(kind: String, id: String, changes: [String: FieldValue]) async throws(TransportError) {
        _ = await server.update(kind: kind, id: id, changes: changes)
    }

    func delete(kind: String, id: String) async throws(TransportError) -> Bool {
        await server.delete(kind: kind, id: id) != nil
    }

    func setRecordFault(kind: String, id: String, permanent: Bool, times: Int) async {
        if permanent {
            await server.rejectPermanently(kind: kind, id: id, reason: "422 refused by a check (simulated)")
        } else {
            await server.failTransiently(kind: kind, id: id, reason: "lock timeout (simulated)", times: times)
        }
    }

    func clearRecordFaults(kind: String, id: String) async { await server.clearFailures(kind: kind, id: id) }
}
