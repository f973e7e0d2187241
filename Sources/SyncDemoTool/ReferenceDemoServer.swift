import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// `sync-demo`'s default server: an in-memory ``ReferenceServer``, user `u1`.
struct ReferenceDemoServer: DemoServer {
    let server = ReferenceServer()

    var headline: String { "two devices of user u1 and an in-memory reference server" }
    var kinds: (pin: String, note: String) { ("pin", "note") }

    func transport(device: String) -> any SyncTransport { server.transport(user: "u1") }

    func liveRows(kind: String) async throws(TransportError) -> [ServerRow] {
        await server.rows(user: "u1", kind: kind)
    }

    func liveRow(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        await server.row(kind: kind, id: id)
    }

    func writeAsAnotherWriter(kind: String, id: String, fields: [String: FieldValue]) async throws(TransportError) {
        await server.tick(1000)
        _ = await server.write(user: "u1", kind: kind, id: id, fields: fields)
    }

    func appliedMutations() async -> Int? { await server.appliedMutations }
}
