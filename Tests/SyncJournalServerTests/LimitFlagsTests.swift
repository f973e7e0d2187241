import Testing
@testable import SyncJournalServer

@Suite("sync-server's limit flags")
struct LimitFlagsTests {
    @Test("each limit flag reaches the HTTP configuration; the defaults are those PROTOCOL.md lists")
    func flagsReachConfiguration() throws {
        guard case .run(let options) = try SyncServerCommandLine.parse([
            "--port", "0", "--max-connections", "30000", "--max-connections-per-address", "40", "--header-timeout", "2.5",
            "--idle-timeout", "90", "--workers", "6", "--max-user-requests", "3", "--user-body-budget", "9000000",
        ]) else {
            Issue.record("not a run")
            return
        }
        let configuration = options.httpConfiguration
        #expect(configuration.maximumConnections == 30_000 && configuration.maximumConnectionsPerAddress == 40)
        #expect(configuration.headerTimeoutMilliseconds == 2_500 && configuration.idleTimeoutMilliseconds == 90_000)
        #expect(configuration.workerThreads == 6 && configuration.maximumConcurrentRequestsPerOwner == 3)
        #expect(configuration.maximumBodyBytesInFlightPerOwner == 9_000_000)
        guard case .run(let defaults) = try SyncServerCommandLine.parse(["--port", "0"]) else { return }
        let standard = defaults.httpConfiguration
        #expect(standard.maximumConnections == 20_000 && standard.maximumConnectionsPerAddress == 256)
        #expect(standard.headerTimeoutMilliseconds == 10_000 && standard.idleTimeoutMilliseconds == 60_000)
        #expect(standard.maximumConcurrentRequestsPerOwner == 4 && standard.maximumBodyBytesInFlightPerOwner == 32 * 1024 * 1024)
        #expect(throws: SyncServerError.self) { try SyncServerCommandLine.parse(["--max-connections-per-address", "0"]) }
        #expect(throws: SyncServerError.self) { try SyncServerCommandLine.parse(["--header-timeout", "-1"]) }
    }
}
