import Testing
import SyncJournalServer

@Suite("sync-server's development mode")
struct DevelopmentModeTests {
    @Test("no users on a loopback host: the token dev-token is user dev, and the ready line says DEVELOPMENT MODE")
    func loopbackWithoutUsers() throws {
        guard case .run(let options) = try SyncServerCommandLine.parse(["--port", "0"]) else { Issue.record("not a run"); return }
        #expect(options.developmentMode)
        #expect(options.users.user(forToken: "dev-token") == "dev")
        #expect(options.users.count == 1)
    }

    @Test("users given, or a host other machines reach: no development token")
    func notDevelopment() throws {
        guard case .run(let withUser) = try SyncServerCommandLine.parse(["--user", "t1:alice"]) else { Issue.record("not a run"); return }
        #expect(!withUser.developmentMode && withUser.users.user(forToken: "dev-token") == nil)
        guard case .run(let open) = try SyncServerCommandLine.parse(["--host", "0.0.0.0"]) else { Issue.record("not a run"); return }
        #expect(!open.developmentMode && open.users.count == 0)
        #expect(SyncServerOptions.isLoopback("::1") && SyncServerOptions.isLoopback("localhost") && !SyncServerOptions.isLoopback("10.0.0.1"))
    }
}
