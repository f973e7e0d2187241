import Foundation
import SyncSimTool
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

@Suite("sync-sim: seeded random runs hold every invariant and repeat byte for byte")
struct SimulatorTests {
    @Test("a seeded run with every fault holds every invariant and converges", arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func seededRunHolds(_ seed: UInt64) async {
        let outcome = await Simulation.runWithShrinking(SimulationConfiguration(seed: seed, devices: 3, steps: 300))
        #expect(outcome.violation == nil, "\(outcome.report)")
        #expect(outcome.statistics.operations > 0)
        #expect(outcome.statistics.crashes > 0)
        #expect(outcome.statistics.invariantChecks > 1_000)
    }

    @Test("server restores: backups restored under a new identity, every device reconciles when it meets the restored server, and no record it showed vanishes; all invariants hold and devices converge", arguments: [1, 5, 8, 9] as [UInt64])
    func serverRestoreRunHolds(_ seed: UInt64) async {
        let outcome = await Simulation.runWithShrinking(SimulationConfiguration(seed: seed, devices: 3, steps: 300,
                                                                                faults: SimulationFault.defaultSet.union([.serverRestore])))
        #expect(outcome.violation == nil, "\(outcome.report)")
        #expect(outcome.statistics.serverRestores > 0 && outcome.statistics.reconciliations > 0)
    }

    @Test("the same seed gives the same output, byte for byte")
    func sameSeedSameOutput() async {
        let configuration = SimulationConfiguration(seed: 42, devices: 4, steps: 400)
        let first = await Simulation.runWithShrinking(configuration)
        let second = await Simulation.runWithShrinking(configuration)
        #expect(first.report == second.report)
        #expect(first.statistics == second.statistics)
        #expect(first.report.hasPrefix("sync-sim seed=42 devices=4 steps=400: "))
        #expect(first.report.split(separator: "\n").count == 1, "one summary line")
    }

    @Test("without faults, devices converge and nothing crashes")
    func noFaultsConverge() async {
        let outcome = await Simulation.runWithShrinking(SimulationConfiguration(seed: 9, devices: 5, steps: 300, faults: []))
        #expect(outcome.violation == nil, "\(outcome.report)")
        #expect(outcome.statistics.crashes == 0)
    }

    @Test("a single fault class can be run alone", arguments: SimulationFault.allCases)
    func singleFaultClass(_ fault: SimulationFault) async {
        let outcome = await Simulation.runWithShrinking(SimulationConfiguration(seed: 11, devices: 3, steps: 150, faults: [fault]))
        #expect(outcome.violation == nil, "\(outcome.report)")
    }

    @Test("a shared list: users share pins, the owner makes members viewers, removes them and adds them back; every invariant holds, rejected edits are surfaced and devices converge",
          arguments: [(1, 2, 3), (2, 2, 3), (3, 3, 4), (4, 3, 5)] as [(UInt64, Int, Int)])
    func sharedListRunHolds(_ seed: UInt64, _ users: Int, _ devices: Int) async {
        var configuration = SimulationConfiguration(seed: seed, devices: devices, steps: 300)
        configuration.users = users
        let outcome = await Simulation.runWithShrinking(configuration)
        #expect(outcome.violation == nil, "\(outcome.report)")
        #expect(outcome.statistics.membershipChanges > 0)
        #expect(outcome.report.contains(" users=\(users) ") && outcome.report.contains("membership changes"))
    }

    @Test("across shared-list runs, edits refused for a role or a removal are surfaced as rejections")
    func sharedListRunsSurfaceRejections() async {
        var rejections = 0
        for seed in 1...4 as ClosedRange<UInt64> {
            var configuration = SimulationConfiguration(seed: seed, devices: 3, steps: 200)
            configuration.users = 2
            let outcome = await Simulation.runWithShrinking(configuration)
            #expect(outcome.violation == nil, "\(outcome.report)")
            rejections += outcome.statistics.rejections
        }
        #expect(rejections > 0)
    }

    @Test("a shared-list run repeats byte for byte from its seed")
    func sharedListSameSeedSameOutput() async {
        var configuration = SimulationConfiguration(seed: 17, devices: 3, steps: 250)
        configuration.users = 2
        let first = await Simulation.runWithShrinking(configuration)
        let second = await Simulation.runWithShrinking(configuration)
        #expect(first.report == second.report && first.statistics == second.statistics)
    }

    @Test("with attachments, seeded runs attach, upload, download and evict files, kill devices mid-upload, hold every invariant and converge",
          arguments: [(1, 1, 3), (2, 1, 3), (3, 2, 3), (4, 3, 4)] as [(UInt64, Int, Int)])
    func attachmentRunHolds(_ seed: UInt64, _ users: Int, _ devices: Int) async {
        var configuration = SimulationConfiguration(seed: seed, devices: devices, steps: 300,
                                                    faults: SimulationFault.defaultSet.union([.attachments]))
        configuration.users = users
        let outcome = await Simulation.runWithShrinking(configuration)
        #expect(outcome.violation == nil, "\(outcome.report)")
        #expect(outcome.statistics.attachmentsAdded > 0 && outcome.statistics.attachmentsUploaded > 0)
        #expect(outcome.report.contains(" attachments added, ") && outcome.report.contains(" crashes mid-upload, "))
    }

    @Test("across attachment runs, opened files are downloaded and devices die while an upload is held")
    func attachmentRunsDownloadAndCrashMidUpload() async {
        var downloads = 0
        var crashes = 0
        for seed in 5...8 as ClosedRange<UInt64> {
            let outcome = await Simulation.runWithShrinking(SimulationConfiguration(seed: seed, devices: 3, steps: 300,
                                                                                    faults: SimulationFault.defaultSet.union([.attachments])))
            #expect(outcome.violation == nil, "\(outcome.report)")
            downloads += outcome.statistics.attachmentsDownloaded
            crashes += outcome.statistics.crashesMidUpload
        }
        #expect(downloads > 0 && crashes > 0)
    }

    @Test("every class at once, server restores with attachments: a re-upload naming a file neither the device nor the restored server holds is surfaced as a rejection, and a file the restore took away is checked once every device has reconciled",
          arguments: [12, 99] as [UInt64])
    func restoresWithAttachmentsHold(_ seed: UInt64) async {
        let outcome = await Simulation.runWithShrinking(SimulationConfiguration(seed: seed, devices: 3, steps: 300, faults: Set(SimulationFault.allCases)))
        #expect(outcome.violation == nil, "\(outcome.report)")
        #expect(outcome.statistics.serverRestores > 0 && outcome.statistics.attachmentsUploaded > 0)
    }

    @Test("an attachment run repeats byte for byte from its seed")
    func attachmentSameSeedSameOutput() async {
        var configuration = SimulationConfiguration(seed: 23, devices: 3, steps: 250, faults: SimulationFault.defaultSet.union([.attachments]))
        configuration.users = 2
        let first = await Simulation.runWithShrinking(configuration)
        let second = await Simulation.runWithShrinking(configuration)
        #expect(first.report == second.report && first.statistics == second.statistics)
    }

    @Test("attachments are asked for: the default runs attach nothing and report no attachment counts")
    func attachmentsAreOffByDefault() async {
        #expect(!SimulationFault.defaultSet.contains(.attachments))
        let outcome = await Simulation.runWithShrinking(SimulationConfiguration(seed: 3, devices: 3, steps: 200))
        #expect(outcome.violation == nil, "\(outcome.report)")
        #expect(outcome.statistics.attachmentsAdded == 0 && outcome.statistics.attachmentsUploaded == 0)
        #expect(!outcome.report.contains("attachment"))
    }

    @Test("the command line: defaults, fault lists, and clear errors")
    func commandLine() throws {
        let parsed = try SimulationConfiguration(arguments: ["--seed", "7", "--devices", "2", "--steps", "50", "--faults", "crash,lose-reply"])
        #expect(parsed.seed == 7 && parsed.devices == 2 && parsed.steps == 50)
        #expect(parsed.faults == [.crash, .loseReply])
        #expect(try SimulationConfiguration(arguments: ["--seed", "1", "--faults", "none"]).faults.isEmpty)
        #expect(try SimulationConfiguration(arguments: ["--seed", "1"]).faults == SimulationFault.defaultSet)
        #expect(try SimulationConfiguration(arguments: ["--seed", "1", "--faults", "default,attachments"]).faults
                == SimulationFault.defaultSet.union([.attachments]))
        #expect(try SimulationConfiguration(arguments: ["--seed", "1", "--faults", "all"]).faults == Set(SimulationFault.allCases))
        #expect(try SimulationConfiguration(arguments: ["--seed", "1"]).users == 1)
        #expect(try SimulationConfiguration(arguments: ["--seed", "1", "--devices", "4", "--users", "3"]).users == 3)
        for bad in [["--devices", "2"], ["--seed", "x"], ["--seed", "1", "--faults", "meteor"], ["--seed", "1", "--devices", "0"], ["--seed"],
                    ["--seed", "1", "--users", "0"], ["--seed", "1", "--users", "9"], ["--seed", "1", "--devices", "2", "--users", "3"],
                    ["--seed", "1", "--users", "2", "--server", "http://127.0.0.1:8787"]] {
            #expect(throws: SimulationConfiguration.Problem.self) { try SimulationConfiguration(arguments: bad) }
        }
    }
}

@Suite("sync-sim binary: exit codes and output")
struct SyncSimBinaryTests {
    @Test("a seeded run prints one summary line and exits 0; the same seed prints the same bytes")
    func seededRunExitsZero() throws {
        let first = try BuiltTool.run("sync-sim", ["--seed", "5", "--devices", "3", "--steps", "120"])
        let second = try BuiltTool.run("sync-sim", ["--seed", "5", "--devices", "3", "--steps", "120"])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput == second.standardOutput)
        #expect(first.standardOutput.hasPrefix("sync-sim seed=5 devices=3 steps=120: "))
        #expect(first.standardOutput.hasSuffix("all held, converged\n"))
    }

    @Test("sync-sim run: passing files exit 0; a failing expectation exits 1 naming file and line")
    func runExitCodes() throws {
        let directory = try #require(ScenarioFiles.directory)
        let passing = ScenarioFiles.names.prefix(3).map { directory.appendingPathComponent($0).path }
        let ok = try BuiltTool.run("sync-sim", ["run"] + passing)
        #expect(ok.status == 0, "\(ok.standardOutput)")
        #expect(ok.standardOutput.hasSuffix("all 3 scenario(s) passed\n"))

        let scratch = try TemporaryDirectory(prefix: "sync-sim")
        defer { scratch.remove() }
        let temporary = scratch.url.appendingPathComponent("failing.scenario")
        try "device A\nA create pin p1 n=1\nexpect server has pin p1\n".write(to: temporary, atomically: true, encoding: .utf8)
        let failed = try BuiltTool.run("sync-sim", ["run", temporary.path])
        #expect(failed.status == 1)
        #expect(failed.standardOutput.contains("\(temporary.path):3: expect server has pin p1: the server lacks pin p1"))
    }

    @Test("bad usage exits 64 (EX_USAGE) with the usage on standard error")
    func badUsage() throws {
        for arguments in [[], ["--steps", "5"], ["run"], ["--seed", "1", "--faults", "meteor"], ["--seed", "1", "--seeds", "1-2"], ["extra"]] {
            let result = try BuiltTool.run("sync-sim", arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.standardError.contains("usage: sync-sim"))
        }
    }
}
