import Foundation
import SyncJournalTestSupport
import Testing
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// Two built `sync-server` processes on one PostgreSQL database, devices
/// (LocalStore + SyncEngine + HTTPTransport) split between them.
@Suite("two sync-server processes on one PostgreSQL database", .enabled(if: PostgreSQLTestDatabase.shouldRun, PostgreSQLTestDatabase.skipReason))
struct PostgreSQLEndToEndTests {
    struct Device {
        let name: String
        let user: String
        let store: LocalStore
        let engine: SyncEngine
    }

    @Test("devices of two users split between two servers edit concurrently, sync until quiet and all hold the database's rows")
    func twoServersConverge() async throws {
        let schema = try PostgreSQLTestSchema()
        let arguments = ["--port", "0", "--postgres", schema.connection, "--user", "t-alice:alice", "--user", "t-bob:bob"]
        let servers = [try RunningSyncServer(arguments), try RunningSyncServer(arguments)]
        for server in servers { #expect(server.readyLine.contains("(postgres "), "\(server.readyLine)") }

        let disk = SimulatedDisk()
        disk.createDirectory("/devices")
        var devices: [Device] = []
        for (index, (name, user)) in [("alice-phone", "alice"), ("alice-tablet", "alice"), ("alice-laptop", "alice"),
                                      ("alice-watch", "alice"), ("bob-phone", "bob"), ("bob-tablet", "bob")].enumerated() {
            let store = try await LocalStore.open(path: "/devices/\(name).journal", options: .init(system: disk, clock: StillClock()))
            let server = servers[index % 2]
            let transport = HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: "t-\(user)", timeout: .seconds(30))
            let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: ["pin"], jitterSeed: UInt64(index + 1)))
            devices.append(Device(name: name, user: user, store: store, engine: engine))
        }

        // Round 1: every device creates records of its own; alice's phone and bob's phone one each that the others will edit.
        for device in devices {
            for number in 0..<4 { _ = try await device.store.create("pin", id: "\(device.name)-\(number)", fields: ["n": .int(Int64(number))]) }
        }
        _ = try await syncUntilQuiet(devices)
        // Round 2: everyone edits the shared record of their user at once (conflicts across servers),
        // updates one own record and deletes another.
        for device in devices {
            let shared = "\(device.user)-phone-0"
            if try await device.store.record("pin", id: shared) != nil {
                _ = try await device.store.update("pin", id: shared, changes: ["by": .string(device.name)])
            }
            _ = try await device.store.update("pin", id: "\(device.name)-1", changes: ["n": .int(100)])
            _ = try await device.store.delete("pin", id: "\(device.name)-2")
        }
        let rounds = try await syncUntilQuiet(devices)

        let database = try PostgreSQLStorage(connection: schema.connection)
        for user in ["alice", "bob"] {
            let rows = try database.pull(user: user, PullRequest(cursors: ["pin": nil], limit: 10_000)).rows.filter { !$0.isTombstone }
            let expected = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0.fields) })
            #expect(expected.count == (user == "alice" ? 4 : 2) * 3, "\(user): every device's 4 records minus one deleted")
            for device in devices where device.user == user {
                let held = try await device.store.records("pin")
                #expect(Dictionary(uniqueKeysWithValues: held.map { ($0.id, $0.fields) }) == expected,
                        "\(device.name) after \(rounds) rounds")
                #expect(held.allSatisfy { !$0.hasPendingChanges }, "\(device.name)")
            }
        }
        for server in servers { #expect(server.stop(.terminate) == 0) }
    }

    /// Syncs every device at once, round after round, until a round pushes
    /// and pulls nothing anywhere; returns the number of rounds.
    private func syncUntilQuiet(_ devices: [Device]) async throws -> Int {
        for round in 1...12 {
            let outcomes = await withTaskGroup(of: SyncOutcome.self) { group in
                for device in devices { group.addTask { await device.engine.sync() } }
                return await group.reduce(into: [SyncOutcome]()) { $0.append($1) }
            }
            var pending = 0
            for device in devices { pending += try await device.store.outboxOperations().count }
            if pending == 0 && outcomes.allSatisfy({ $0 == .ok(pushed: 0, pulled: 0, conflicts: 0) }) { return round }
        }
        Issue.record("the devices were not quiet after 12 rounds")
        return 12
    }
}
