import Foundation
import Testing
import SyncLoadTool

@Suite("sync-load's command line and statistics")
struct LoadConfigurationTests {
    @Test("the defaults are 8 clients, 10 s, batches of 50, one pull per push, the development token")
    func defaults() throws {
        let configuration = try LoadConfiguration(arguments: ["--server", "http://127.0.0.1:8787"])
        #expect(configuration.clients == 8 && configuration.seconds == 10 && configuration.batchSize == 50)
        #expect(configuration.pullsPerPush == 1 && configuration.token == "dev-token" && configuration.preloadRows == 0)
    }

    @Test("every flag is read; a missing server, a bad number or nothing to do is refused with a reason")
    func flags() throws {
        let configuration = try LoadConfiguration(arguments: ["--server", "http://h:1", "--token", "t", "--clients", "3", "--seconds", "0.5",
                                                              "--batch", "1", "--pulls-per-push", "2", "--pull-limit", "9", "--preload", "7"])
        #expect(configuration.token == "t" && configuration.clients == 3 && configuration.seconds == 0.5)
        #expect(configuration.batchSize == 1 && configuration.pullsPerPush == 2 && configuration.pullLimit == 9 && configuration.preloadRows == 7)
        #expect(throws: LoadConfiguration.Problem.self) { try LoadConfiguration(arguments: ["--clients", "2"]) }
        #expect(throws: LoadConfiguration.Problem.self) { try LoadConfiguration(arguments: ["--server", "ftp://h"]) }
        #expect(throws: LoadConfiguration.Problem.self) { try LoadConfiguration(arguments: ["--server", "http://h:1", "--clients", "0"]) }
        #expect(throws: LoadConfiguration.Problem.self) {
            try LoadConfiguration(arguments: ["--server", "http://h:1", "--batch", "0", "--pulls-per-push", "0"])
        }
    }

    @Test("--server and --token given several times spread the clients round robin; a bad second URL is refused")
    func severalServersAndTokens() throws {
        let configuration = try LoadConfiguration(arguments: ["--server", "http://a:1", "--server", "http://b:2",
                                                              "--token", "t0", "--token", "t1", "--token", "t2"])
        #expect((0..<4).map { configuration.server(forClient: $0).absoluteString } == ["http://a:1", "http://b:2", "http://a:1", "http://b:2"])
        #expect((0..<4).map { configuration.token(forClient: $0) } == ["t0", "t1", "t2", "t0"])
        let plain = try LoadConfiguration(arguments: ["--server", "http://a:1"])
        #expect(plain.server(forClient: 5).absoluteString == "http://a:1" && plain.token(forClient: 5) == "dev-token")
        #expect(throws: LoadConfiguration.Problem.self) { try LoadConfiguration(arguments: ["--server", "http://a:1", "--server", "ftp://b"]) }
    }

    @Test("--client chooses URLSession (the default) or the plain client; plain refuses https servers and --live-latency")
    func clientChoice() throws {
        #expect(try LoadConfiguration(arguments: ["--server", "http://a:1"]).client == .urlSession)
        #expect(try LoadConfiguration(arguments: ["--server", "http://a:1", "--client", "plain"]).client == .plain)
        #expect(try LoadConfiguration(arguments: ["--server", "https://a:1", "--client", "urlsession"]).client == .urlSession)
        #expect(throws: LoadConfiguration.Problem.self) { try LoadConfiguration(arguments: ["--server", "http://a:1", "--client", "curl"]) }
        #expect(throws: LoadConfiguration.Problem.self) {
            try LoadConfiguration(arguments: ["--server", "http://a:1", "--server", "https://b:2", "--client", "plain"])
        }
        #expect(throws: LoadConfiguration.Problem.self) {
            try LoadConfiguration(arguments: ["--server", "http://a:1", "--client", "plain", "--live-latency", "3"])
        }
    }

    @Test("--live-latency and its companions are read; without it there is no live run; 0 edits are refused")
    func liveLatencyFlags() throws {
        let configuration = try LoadConfiguration(arguments: ["--server", "http://h:1", "--live-latency", "200", "--edit-coalescing", "50",
                                                              "--wait-timeout", "20", "--device-b-server", "http://h:2"])
        #expect(configuration.liveLatencyEdits == 200 && configuration.editCoalescingMilliseconds == 50 && configuration.changeWaitSeconds == 20)
        #expect(configuration.deviceBServer == URL(string: "http://h:2"))
        #expect(try LoadConfiguration(arguments: ["--server", "http://h:1"]).liveLatencyEdits == nil)
        #expect(throws: LoadConfiguration.Problem.self) { try LoadConfiguration(arguments: ["--server", "http://h:1", "--live-latency", "0"]) }
        let report = LiveLatencyReport(latencies: [0.010, 0.020, 0.030, 0.040], server: "http://h:1", editCoalescingMilliseconds: 0)
        #expect(report.text.contains("p50 20.0 ms  p95 40.0 ms  max 40.0 ms"), "\(report.text)")
    }

    @Test("--idle-connections and --server-pid are read; a negative count or pid 0 is refused")
    func idleAndMemoryFlags() throws {
        let configuration = try LoadConfiguration(arguments: ["--server", "http://h:1", "--idle-connections", "10000", "--server-pid", "4242"])
        #expect(configuration.idleConnections == 10_000 && configuration.serverPID == 4_242)
        let plain = try LoadConfiguration(arguments: ["--server", "http://h:1"])
        #expect(plain.idleConnections == 0 && plain.serverPID == nil)
        #expect(throws: LoadConfiguration.Problem.self) { try LoadConfiguration(arguments: ["--server", "http://h:1", "--idle-connections", "-1"]) }
        #expect(throws: LoadConfiguration.Problem.self) { try LoadConfiguration(arguments: ["--server", "http://h:1", "--server-pid", "0"]) }
    }

    @Test("the server's memory is read from VmRSS and VmHWM of /proc/PID/status, in KiB")
    func serverMemory() {
        let status = "Name:\tsync-server\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t18\n"
        #expect(ServerMemory.parse(status: status) == ServerMemory(residentKiB: 102_400, peakResidentKiB: 204_800))
        #expect(ServerMemory.parse(status: "Name:\tx\n") == nil)
    }

    @Test("quantiles are nearest-rank in milliseconds; tallies merge by adding")
    func statistics() {
        #expect(LoadTally.quantileMilliseconds([], 0.5) == nil)
        #expect(LoadTally.quantileMilliseconds([0.003, 0.001, 0.002], 0.5) == 2)
        #expect(LoadTally.quantileMilliseconds((1...100).map { Double($0) / 1_000 }, 0.99) == 99)
        var first = LoadTally()
        first.pushes = 2
        first.noteError("a")
        var second = LoadTally()
        second.pulls = 3
        second.rows = 30
        second.noteError("b")
        first.merge(second)
        #expect(first.pushes == 2 && first.pulls == 3 && first.rows == 30 && first.errors == 2 && first.errorSamples == ["a", "b"])
    }

    @Test("an unknown argument gives usage and status 64; nothing listening gives status 69")
    func commandStatuses() async {
        #expect(await SyncLoadCommand.main(["--bogus"]).status == 64)
        let unreachable = await SyncLoadCommand.main(["--server", "http://127.0.0.1:1", "--seconds", "1"])
        #expect(unreachable.status == 69)
        #expect(unreachable.errors.contains("cannot reach"))
    }
}
