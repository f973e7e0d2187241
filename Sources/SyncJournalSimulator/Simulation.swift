import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// How a random run is set up (`sync-sim --seed S --devices D --steps N [--faults LIST]`).
public struct SimulationConfiguration: Sendable, Hashable {
    /// The seed of every random choice.
    public var seed: UInt64
    /// Devices (1 to 26), all of user u1.
    public var devices: Int
    /// Steps before the faults stop and every device syncs twice.
    public var steps: Int
    /// The fault classes injected.
    public var faults: Set<SimulationFault>
    /// Whether a violation's trace is shrunk.
    public var shrink: Bool
    /// The most runs shrinking may take.
    public var shrinkBudget: Int
    /// A running `sync-server` to run the devices against (`nil`: the in-memory reference server).
    public var server: URL?
    /// The bearer token for ``server``.
    public var token: String = "dev-token"

    /// A configuration; every fault class by default.
    public init(seed: UInt64, devices: Int = 3, steps: Int = 200, faults: Set<SimulationFault> = Set(SimulationFault.allCases),
                shrink: Bool = true, shrinkBudget: Int = 300) {
        self.seed = seed
        self.devices = devices
        self.steps = steps
        self.faults = faults
        self.shrink = shrink
        self.shrinkBudget = shrinkBudget
    }

    /// Why the command line is not a configuration.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// Parses `--seed S --devices D --steps N [--faults LIST] [--no-shrink] [--server URL [--token TOKEN]]`.
    public init(arguments: [String]) throws(Problem) {
        var server: URL?
        var token = "dev-token"
        var seed: UInt64?
        var devices = 3
        var steps = 200
        var faults = Set(SimulationFault.allCases)
        var shrink = true
        var index = 0
        func value(_ name: String) throws(Problem) -> String {
            guard index + 1 < arguments.count else { throw Problem(description: "\(name) needs a value") }
            index += 1
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--seed":
                let text = try value(argument)
                guard let parsed = UInt64(text) else { throw Problem(description: "--seed must be a whole number 0...\(UInt64.max), saw \(text)") }
                seed = parsed
            case "--devices":
                let text = try value(argument)
                guard let parsed = Int(text), (1...26).contains(parsed) else { throw Problem(description: "--devices must be 1 to 26, saw \(text)") }
                devices = parsed
            case "--steps":
                let text = try value(argument)
                guard let parsed = Int(text), parsed >= 0 else { throw Problem(description: "--steps must be a whole number, saw \(text)") }
                steps = parsed
            case "--faults":
                let text = try value(argument)
                if text == "none" {
                    faults = []
                } else if text == "all" {
                    faults = Set(SimulationFault.allCases)
                } else {
                    faults = []
                    for name in text.split(separator: ",") {
                        guard let fault = SimulationFault(rawValue: String(name)) else {
                            throw Problem(description: "unknown fault \(name) (known: \(SimulationFault.allCases.map(\.rawValue).joined(separator: ",")), all, none)")
                        }
                        faults.insert(fault)
                    }
                }
            case "--no-shrink":
                shrink = false
            case "--server":
                let text = try value(argument)
                guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
                    throw Problem(description: "--server needs an http(s) URL such as http://127.0.0.1:8787, saw \(text)")
                }
                server = url
            case "--token":
                token = try value(argument)
                if token.isEmpty { throw Problem(description: "--token needs a value") }
            default:
                throw Problem(description: "unknown argument \(argument)")
            }
            index += 1
        }
        guard let seed else { throw Problem(description: "--seed is required") }
        self.init(seed: seed, devices: devices, steps: steps, faults: faults, shrink: shrink)
        self.server = server
        self.token = token
    }
}

/// An invariant that did not hold.
public struct SimulationViolation: Sendable, Hashable, CustomStringConvertible {
    /// 1-based step; `steps + 1` is the final phase (faults stopped, every device synced twice).
    public var step: Int
    /// `nothing-lost`, `no-resurrection`, `no-double-apply`, `replay-equals-state`, `convergence`,
    /// or `server` (with `--server`: the harness could not read the server's state or write as another writer).
    public var invariant: String
    /// What was seen.
    public var detail: String
    /// `invariant: detail`.
    public var description: String { "\(invariant): \(detail)" }
}

/// What one run counted.
public struct SimulationStatistics: Sendable, Hashable {
    /// Steps run.
    public var steps = 0
    /// Local edits the store acknowledged.
    public var operations = 0
    /// Syncs run.
    public var syncs = 0
    /// Crashes of every kind.
    public var crashes = 0
    /// Crashes while a request was held.
    public var crashesMidRequest = 0
    /// Crashes inside a checkpoint.
    public var crashesMidCheckpoint = 0
    /// Crashes inside an edit's write.
    public var crashesMidWrite = 0
    /// Conflicts surfaced on all devices.
    public var conflicts = 0
    /// Individual invariant checks evaluated.
    public var invariantChecks = 0
}

/// What a run (with its shrinking) found, and the text the tool prints.
public struct SimulationOutcome: Sendable, Hashable {
    /// The first violation, if any.
    public var violation: SimulationViolation?
    /// The statistics of the (unshrunk) run.
    public var statistics: SimulationStatistics
    /// One summary line, or the violation with its shrunk trace.
    public var report: String
}

/// The random simulator: a seeded generator, a virtual clock, D
/// devices each with a journal on its own simulated disk, the reference
/// server, and a fault schedule. After every step and at the end it checks:
///
/// - **nothing-lost**: every edit the store acknowledged is still queued, was
///   applied by the server, or is surfaced as a conflict or rejection (or was
///   cancelled locally before it ever left the device);
/// - **no-resurrection**: a record a device deleted does not show again there
///   unless a later create (by anyone) brings it back or a conflict explains
///   it; a locally cancelled create never reaches the server; a row the
///   server deleted is not live again without a later create;
/// - **no-double-apply**: the server never applies one operation twice;
/// - **replay-equals-state**: after a crash at rest, while a request is held,
///   or inside a checkpoint, the reopened journal replays to the state before
///   it; inside an edit's write, to the state before or after that edit;
/// - **convergence**: once faults stop and every device syncs twice, every
///   device shows what the server holds and every outbox is empty.
///
/// ```swift
/// let outcome = await Simulation.runWithShrinking(SimulationConfiguration(seed: 7, devices: 3, steps: 300))
/// print(outcome.report, terminator: "")
/// ```
public enum Simulation {
    static let pool: [String: [String]] = ["note": ["n0", "n1", "n2", "n3"], "pin": ["p0", "p1", "p2", "p3", "p4", "p5"]]
    static let kinds = ["note", "pin"]

    /// Runs `configuration`; on a violation, shrinks the trace and reports it.
    public static func runWithShrinking(_ configuration: SimulationConfiguration) async -> SimulationOutcome {
        let first = await SimulationRun.execute(configuration, replay: nil)
        let header = "sync-sim seed=\(configuration.seed) devices=\(configuration.devices) steps=\(configuration.steps)"
            + (first.serverSummary.isEmpty ? "" : " " + first.serverSummary)
        let stats = first.statistics
        guard let violation = first.violation else {
            let report = "\(header): \(stats.operations) operations, \(stats.syncs) syncs, \(stats.crashes) crashes "
                + "(\(stats.crashesMidRequest) mid-request, \(stats.crashesMidCheckpoint) mid-checkpoint, \(stats.crashesMidWrite) mid-write), "
                + "\(stats.conflicts) conflicts, \(stats.invariantChecks) invariant checks: all held, converged\n"
            return SimulationOutcome(violation: nil, statistics: stats, report: report)
        }
        var lines: [String] = []
        let at = violation.step > configuration.steps ? "the final sync rounds" : "step \(violation.step)"
        lines.append("\(header): VIOLATION at \(at): \(violation)")
        lines.append("reproduce: sync-sim --seed \(configuration.seed) --devices \(configuration.devices) --steps \(configuration.steps)"
            + (configuration.faults == Set(SimulationFault.allCases) ? "" : " --faults " + faultList(configuration.faults))
            + (configuration.server.map { " --server \($0.absoluteString)" } ?? "")
            + (configuration.server == nil ? "" : " (timing differs between runs against a real server: it may not repeat)"))
        var trace = Array(first.trace.prefix(violation.step))
        var shrunkViolation = violation
        var runs = 0
        if configuration.server != nil {
            lines.append("not shrunk: against a real server a shorter run does not repeat the same timing")
        }
        if configuration.shrink && configuration.server == nil {
            (trace, shrunkViolation, runs) = await shrink(configuration, trace: trace, violation: violation)
        }
        lines.append("shrunk trace: \(trace.count) of \(min(violation.step, first.trace.count)) steps (\(runs) shrinking runs), "
            + "then the faults stop and every device syncs twice:")
        for (index, step) in trace.enumerated() { lines.append("  \(index + 1). \(step.text)") }
        let shrunkAt = shrunkViolation.step > trace.count ? "the final sync rounds" : "step \(shrunkViolation.step)"
        lines.append("shrunk run fails at \(shrunkAt): \(shrunkViolation)")
        return SimulationOutcome(violation: violation, statistics: stats, report: lines.joined(separator: "\n") + "\n")
    }

    static func faultList(_ faults: Set<SimulationFault>) -> String {
        faults.isEmpty ? "none" : SimulationFault.allCases.filter(faults.contains).map(\.rawValue).joined(separator: ",")
    }

    /// Removes chunks of steps (halves, quarters, … single steps) while the
    /// run still fails with the same invariant.
    static func shrink(_ configuration: SimulationConfiguration, trace: [SimulationStep],
                       violation: SimulationViolation) async -> ([SimulationStep], SimulationViolation, Int) {
        var best = trace
        var bestViolation = violation
        var runs = 0
        var chunk = max(1, best.count / 2)
        while runs < configuration.shrinkBudget {
            var index = 0
            var removedAny = false
            while index < best.count && runs < configuration.shrinkBudget {
                var candidate = best
                candidate.removeSubrange(index..<min(best.count, index + chunk))
                runs += 1
                var replayConfiguration = configuration
                replayConfiguration.steps = candidate.count
                let result = await SimulationRun.execute(replayConfiguration, replay: candidate)
                if let found = result.violation, found.invariant == violation.invariant {
                    best = Array(candidate.prefix(found.step))
                    bestViolation = found
                    removedAny = true
                } else {
                    index += chunk
                }
            }
            if chunk == 1 && !removedAny { break }
            chunk = max(1, chunk / 2)
        }
        return (best, bestViolation, runs)
    }
}

/// One run: the devices, the server, the ledger of acknowledged edits, and the checks.
final class SimulationRun {
    struct Result {
        var violation: SimulationViolation?
        var trace: [SimulationStep]
        var statistics: SimulationStatistics
        /// How the server is named in the report (empty for the in-memory one).
        var serverSummary = ""
    }

    /// An edit the store acknowledged, and what became of it.
    struct LedgerEntry {
        enum State: Equatable {
            /// Still to be accounted for at each check.
            case open
            /// Merged into another queued operation by compaction: that one's fate is its fate.
            case coalesced(into: OperationID)
            /// Removed from the queue by a later edit; `sent`: it was marked as possibly on the server then.
            case cancelled(sent: Bool)
            /// Applied by the server or surfaced as a conflict or rejection.
            case settled
        }
        var device: Int
        var text: String
        var step: Int
        var state: State
    }

    /// A record the device's user deleted: it must not show again without a reason.
    struct Deletion {
        var operationID: OperationID
        var sequence: Int
        var step: Int
    }

    let configuration: SimulationConfiguration
    let server: any SimulationServer
    let clock = ManualClock()
    let log = ServerLog()
    let counter = EventCounter()
    var devices: [SimulatedDevice] = []
    var generator: SeededGenerator
    var statistics = SimulationStatistics()
    var ledger: [OperationID: LedgerEntry] = [:]
    /// Per device, the ledger entries still to account for at each check, in the order they were made.
    var openIDs: [[OperationID]] = []
    var deletions: [[RecordKey: Deletion]] = []
    var currentStep = 0
    var violation: SimulationViolation?

    init(configuration: SimulationConfiguration) {
        self.configuration = configuration
        generator = SeededGenerator(seed: configuration.seed)
        if let url = configuration.server {
            server = HTTPSimulationServer(baseURL: url, token: configuration.token)
        } else {
            server = ReferenceSimulationServer()
        }
    }

    static func execute(_ configuration: SimulationConfiguration, replay: [SimulationStep]?) async -> Result {
        let run = SimulationRun(configuration: configuration)
        var result = await run.run(replay: replay)
        result.serverSummary = run.server.summary
        return result
    }

    func fail(_ invariant: String, _ detail: String) {
        if violation == nil { violation = SimulationViolation(step: currentStep, invariant: invariant, detail: detail) }
    }

    func name(_ device: Int) -> String { SimulationStep.deviceName(device) }

    // MARK: The run

    func run(replay: [SimulationStep]?) async -> Result {
        var setup = SeededGenerator(seed: configuration.seed ^ 0x5EED_5EED_5EED_5EED)
        let policies: [ConflictPolicy] = [.serverWins, .clientWins, .mergeFields]
        for index in 0..<configuration.devices {
            let perKind = Dictionary(uniqueKeysWithValues: Simulation.kinds.map { ($0, policies[Int.random(in: 0..<3, using: &setup)]) })
            do {
                let device = try await SimulatedDevice(
                    name: name(index), user: "u1", server: server, clock: clock, kinds: Simulation.kinds,
                    checkpointThreshold: 0, jitterSeed: setup.next(), log: log, sequence: counter,
                    batchSize: Int.random(in: 1...4, using: &setup), pullLimit: Int.random(in: 2...5, using: &setup), policies: perKind)
                devices.append(device)
            } catch {
                fail("replay-equals-state", "\(name(index)) could not open an empty journal: \(error)")
                return Result(violation: violation, trace: [], statistics: statistics)
            }
            deletions.append([:])
            openIDs.append([])
        }
        var trace: [SimulationStep] = []
        let total = replay?.count ?? configuration.steps
        for index in 0..<total {
            currentStep = index + 1
            let step: SimulationStep
            if let replay { step = replay[index] } else { step = await generate() }
            trace.append(step)
            statistics.steps += 1
            if step.advance > 0 { await clock.advance(by: step.advance) }
            if step.tick > 0 { await server.tick(step.tick) }
            await perform(step.action)
            if violation == nil { await checkInvariants() }
            if violation != nil { return Result(violation: violation, trace: trace, statistics: statistics) }
        }
        currentStep = total + 1
        await finish()
        var conflicts = 0
        for device in devices { conflicts += ((try? await device.store?.conflicts())?.count) ?? 0 }
        statistics.conflicts = conflicts
        return Result(violation: violation, trace: trace, statistics: statistics)
    }

    // MARK: Generating steps

    func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }
    func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &generator)] }
    func enabled(_ fault: SimulationFault) -> Bool { configuration.faults.contains(fault) }

    func randomFields(kind: String, all: Bool) -> [String: FieldValue] {
        var fields: [String: FieldValue] = [:]
        if kind == "pin" {
            if all || chance(60) { fields["name"] = .string(pick(["Cafe", "Museum", "Tapas", "Park", "Bakery"])) }
            if all || chance(50) { fields["rating"] = .int(Int64.random(in: 1...5, using: &generator)) }
            if all || chance(40) { fields["tags"] = .stringSet(Set(["food", "art", "walk"].filter { _ in chance(50) })) }
        } else {
            if all || chance(70) { fields["text"] = .string(pick(["buy milk", "call mum", "tapas at 8", "pack boots"])) }
            if all || chance(40) { fields["done"] = .bool(chance(50)) }
        }
        if fields.isEmpty { fields = kind == "pin" ? ["rating": .int(3)] : ["done": .bool(true)] }
        return fields
    }

    func randomEdit(device: Int) async -> SimulationEdit {
        let state = try? await devices[device].store?.currentState()
        let kind = pick(Simulation.kinds)
        var id = pick(Simulation.pool[kind]!)
        if let state, chance(50) {
            let visible = Simulation.pool[kind]!.filter { state.visibleFields(of: RecordKey(kind: kind, id: $0)) != nil }
            if !visible.isEmpty { id = pick(visible) }
        }
        let visible = state?.visibleFields(of: RecordKey(kind: kind, id: id)) != nil
        if !visible { return .create(kind: kind, id: id, fields: randomFields(kind: kind, all: true)) }
        return chance(60) ? .update(kind: kind, id: id, fields: randomFields(kind: kind, all: false)) : .delete(kind: kind, id: id)
    }

    func generate() async -> SimulationStep {
        let device = Int.random(in: 0..<devices.count, using: &generator)
        let advance = chance(70) ? Int64.random(in: 0...3_000, using: &generator) : 0
        let tick: Int64 = chance(50) ? Int64.random(in: 1...3, using: &generator) : 0
        let roll = Int.random(in: 0..<100, using: &generator)
        var action: SimulationAction?
        switch roll {
        case 0..<24:
            break
        case 24..<46:
            var faults: [SyncFault] = []
            if enabled(.loseRequest) { faults.append(.loseRequest) }
            if enabled(.loseReply) { faults.append(.loseReply) }
            if enabled(.duplicate) { faults.append(.duplicate) }
            if enabled(.transient) { faults.append(.transient) }
            if enabled(.permanent) { faults.append(.permanent) }
            action = .sync(device: device, !faults.isEmpty && chance(35) ? pick(faults) : .none)
        case 46..<51 where enabled(.offline):
            action = .online(device: device, devices[device].offline)
        case 51..<59 where enabled(.otherWriters):
            let kind = pick(Simulation.kinds)
            let id = pick(Simulation.pool[kind]!)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: action = .writerWrite(kind: kind, id: id, fields: randomFields(kind: kind, all: true))
            case 1: action = .writerUpdate(kind: kind, id: id, fields: randomFields(kind: kind, all: false))
            default: action = .writerDelete(kind: kind, id: id)
            }
        case 59..<62 where (enabled(.transient) || enabled(.permanent)) && server.hasRecordFaults:
            let kind = pick(Simulation.kinds)
            let id = pick(Simulation.pool[kind]!)
            if chance(50) {
                action = .clearRecordFault(kind: kind, id: id)
            } else {
                let permanent = enabled(.permanent) && (!enabled(.transient) || chance(40))
                action = .recordFault(kind: kind, id: id, permanent: permanent, times: Int.random(in: 1...3, using: &generator))
            }
        case 62..<65 where enabled(.crash):
            action = .crash(device: device, powerSeed: chance(60) ? generator.next() : nil)
        case 65..<69 where enabled(.crashMidRequest):
            action = .crashMidRequest(device: device, choice: chance(60) ? generator.next() : nil, powerSeed: generator.next())
        case 69..<77 where enabled(.inFlightEdits):
            action = .inFlightEdit(device: device, choice: generator.next(), loseReply: enabled(.loseReply) && chance(30))
        case 77..<80 where enabled(.crashMidCheckpoint):
            action = .crashMidCheckpoint(device: device, afterCalls: Int.random(in: 0..<16, using: &generator), powerSeed: generator.next())
        case 83..<87:
            action = .checkpoint(device: device)
        case 80..<83 where enabled(.crashMidWrite):
            let edit = await randomEdit(device: device)
            action = .crashMidWrite(device: device, afterCalls: Int.random(in: 0..<6, using: &generator), edit: edit, powerSeed: generator.next())
        default:
            break
        }
        if action == nil { action = .edit(device: device, await randomEdit(device: device)) }
        return SimulationStep(action: action!, advance: advance, tick: tick)
    }

    // MARK: Performing steps

    func perform(_ action: SimulationAction) async {
        switch action {
        case .edit(let device, let edit):
            _ = await makeEdit(device: device, edit)
        case .sync(let device, let fault):
            await sync(device: device, fault: fault)
        case .online(let device, let online):
            await devices[device].setOnline(online)
        case .writerWrite(let kind, let id, let fields):
            do throws(TransportError) {
                if try await server.write(kind: kind, id: id, fields: fields) {
                    await log.noteWriter(RecordKey(kind: kind, id: id), created: true, sequence: counter.next())
                }
            } catch {
                fail("server", "the other writer's write of \(kind) \(id) failed: \(error)")
            }
        case .writerUpdate(let kind, let id, let fields):
            do throws(TransportError) { try await server.update(kind: kind, id: id, changes: fields) } catch {
                fail("server", "the other writer's update of \(kind) \(id) failed: \(error)")
            }
        case .writerDelete(let kind, let id):
            do throws(TransportError) {
                if try await server.delete(kind: kind, id: id) {
                    await log.noteWriter(RecordKey(kind: kind, id: id), created: false, sequence: counter.next())
                }
            } catch {
                fail("server", "the other writer's delete of \(kind) \(id) failed: \(error)")
            }
        case .recordFault(let kind, let id, let permanent, let times):
            await server.setRecordFault(kind: kind, id: id, permanent: permanent, times: times)
        case .clearRecordFault(let kind, let id):
            await server.clearRecordFaults(kind: kind, id: id)
        case .crash(let device, let powerSeed):
            let before = await state(of: device)
            await devices[device].crash(powerSeed.map { .random(seed: $0) } ?? .processCrash)
            await restartAndCompare(device: device, expected: before, what: powerSeed == nil ? "a process crash at rest" : "a power cut at rest")
        case .crashMidRequest(let device, let choice, let powerSeed):
            await crashMidRequest(device: device, choice: choice, powerSeed: powerSeed)
        case .inFlightEdit(let device, let choice, let loseReply):
            await inFlightEdit(device: device, choice: choice, loseReply: loseReply)
        case .checkpoint(let device):
            do { try await devices[device].store?.checkpoint() } catch {
                fail("replay-equals-state", "\(name(device))'s checkpoint failed on a healthy disk: \(error)")
            }
        case .crashMidCheckpoint(let device, let calls, let powerSeed):
            let before = await state(of: device)
            devices[device].disk.freeze(afterCalls: calls)
            try? await devices[device].store?.checkpoint()
            await devices[device].crash(.random(seed: powerSeed))
            statistics.crashesMidCheckpoint += 1
            await restartAndCompare(device: device, expected: before, what: "a power cut inside a checkpoint")
        case .crashMidWrite(let device, let calls, let edit, let powerSeed):
            let before = await state(of: device)
            devices[device].disk.freeze(afterCalls: calls)
            let acknowledged = await makeEdit(device: device, edit)
            let after = acknowledged ? await state(of: device) : nil
            await devices[device].crash(.random(seed: powerSeed))
            statistics.crashesMidWrite += 1
            if let after {
                await restartAndCompare(device: device, expected: after, what: "a power cut after an acknowledged edit")
            } else {
                statistics.crashes += 1
                do { try await devices[device].restart() } catch {
                    fail("replay-equals-state", "\(name(device)) could not reopen its journal after a power cut inside an edit: \(error)")
                    return
                }
                guard let reopened = await state(of: device), let before else { return }
                statistics.invariantChecks += 1
                if reopened != before {
                    if reopened.snapshot == before.snapshot && reopened.cursors == before.cursors && reopened.conflicts == before.conflicts {
                        // The interrupted edit survived: the app was told it failed, which is allowed.
                        account(device: device, edit: edit, before: before, after: reopened, returnedID: nil, interrupted: true)
                    } else {
                        fail("replay-equals-state", "after a power cut inside \(name(device))'s \(edit.text), the journal replays to neither "
                            + "the state before nor after it: " + difference(before, reopened))
                    }
                }
            }
        }
    }

    func state(of device: Int) async -> StoreState? {
        try? await devices[device].store?.currentState()
    }

    func restartAndCompare(device: Int, expected: StoreState?, what: String) async {
        statistics.crashes += 1
        do { try await devices[device].restart() } catch {
            fail("replay-equals-state", "\(name(device)) could not reopen its journal after \(what): \(error)")
            return
        }
        let status = await devices[device].statusName()
        guard status == "ok" else {
            fail("replay-equals-state", "\(name(device))'s journal reopened \(status) after \(what)")
            return
        }
        guard let expected, let reopened = await state(of: device) else { return }
        statistics.invariantChecks += 1
        if reopened != expected {
            fail("replay-equals-state", "after \(what), \(name(device))'s journal replays to a different state: " + difference(expected, reopened))
        }
    }

    /// A short description of how two states differ.
    func difference(_ expected: StoreState, _ actual: StoreState) -> String {
        var parts: [String] = []
        func rows(_ state: StoreState) -> [String] {
            state.snapshot.values.sorted { $0.key < $1.key }.map { "\($0.kind) \($0.id)@\($0.updatedAt)" }
        }
        func outbox(_ state: StoreState) -> [String] {
            state.outbox.operations.map { "\($0.operation.kind) \($0.operation.entity) \($0.operation.recordID)" + ($0.sent ? " (sent)" : "") }
        }
        if expected.snapshot != actual.snapshot { parts.append("rows \(rows(expected)) became \(rows(actual))") }
        if expected.outbox.operations != actual.outbox.operations {
            if outbox(expected) != outbox(actual) {
                parts.append("outbox \(outbox(expected)) became \(outbox(actual))")
            } else if let (was, now) = zip(expected.outbox.operations, actual.outbox.operations).first(where: { $0.0 != $0.1 }) {
                func entry(_ e: OutboxOperation) -> String {
                    "attempts \(e.attempts), permanent failures \(e.permanentFailures), quarantined \(e.quarantined), "
                        + "last error \(e.lastError ?? "none"), base \(e.operation.baseUpdatedAt.map(String.init) ?? "none"), "
                        + "fields \(ScenarioValue.format(e.operation.fields))"
                }
                parts.append("queued \(was.operation.kind) \(was.operation.entity) \(was.operation.recordID) had \(entry(was)), now \(entry(now))")
            }
        }
        if expected.cursors != actual.cursors {
            parts.append("cursors \(expected.cursors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }) became "
                + "\(actual.cursors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })")
        }
        if expected.conflicts != actual.conflicts { parts.append("\(expected.conflicts.count) conflicts became \(actual.conflicts.count)") }
        if expected.baseRows != actual.baseRows { parts.append("base rows differ") }
        if expected.rejections != actual.rejections { parts.append("rejections differ") }
        return parts.isEmpty ? "(states differ)" : parts.joined(separator: "; ")
    }

    func sync(device: Int, fault: SyncFault) async {
        statistics.syncs += 1
        let simulated = devices[device]
        do {
            switch fault {
            case .none: try await simulated.sync()
            case .loseRequest: _ = try await simulated.sync(injecting: .loseRequest, on: .any)
            case .loseReply: _ = try await simulated.sync(injecting: .loseReply, on: .push)
            case .duplicate: _ = try await simulated.sync(injecting: .duplicate, on: .push)
            case .transient: _ = try await simulated.sync(injecting: .transient(reason: "503 (simulated)", retryAfterMilliseconds: 1_000), on: .any)
            case .permanent: _ = try await simulated.sync(injecting: .permanent(reason: "401 (simulated)"), on: .any)
            }
        } catch {
            fail("replay-equals-state", "\(name(device)) could not sync: \(error)")
        }
    }

    /// The in-flight operations' records, and an edit of one of them chosen by `choice`.
    func inFlightChoice(device: Int, choice: UInt64) async -> SimulationEdit? {
        guard let store = devices[device].store, let queued = try? await store.pendingOperations() else { return nil }
        var keys: [RecordKey] = []
        for entry in queued where await store.isInFlight(entry.id) { if !keys.contains(entry.key) { keys.append(entry.key) } }
        guard !keys.isEmpty else { return nil }
        var random = SeededGenerator(seed: choice)
        let key = keys[Int.random(in: 0..<keys.count, using: &random)]
        let visible = ((try? await store.record(key.kind, id: key.id)) ?? nil) != nil
        if !visible { return .create(kind: key.kind, id: key.id, fields: key.kind == "pin" ? ["name": .string("Again")] : ["text": .string("again")]) }
        if Int.random(in: 0..<100, using: &random) < 65 { return .delete(kind: key.kind, id: key.id) }
        return .update(kind: key.kind, id: key.id, fields: key.kind == "pin" ? ["rating": .int(Int64.random(in: 1...5, using: &random))]
                                                                              : ["done": .bool(true)])
    }

    func inFlightEdit(device: Int, choice: UInt64, loseReply: Bool) async {
        let simulated = devices[device]
        statistics.syncs += 1
        let ended: SyncOutcome?
        do { ended = try await simulated.syncHoldingPush() } catch {
            fail("replay-equals-state", "\(name(device)) could not sync: \(error)")
            return
        }
        guard ended == nil else { return }
        if let edit = await inFlightChoice(device: device, choice: choice) { _ = await makeEdit(device: device, edit) }
        _ = try? await simulated.release(deliverReply: !loseReply)
    }

    func crashMidRequest(device: Int, choice: UInt64?, powerSeed: UInt64) async {
        let simulated = devices[device]
        statistics.syncs += 1
        var ended: SyncOutcome?
        do {
            ended = try await simulated.syncHoldingPush()
            if ended != nil { ended = try await simulated.sync(.hold) }
        } catch {
            fail("replay-equals-state", "\(name(device)) could not sync: \(error)")
            return
        }
        if ended == nil, let choice, let edit = await inFlightChoice(device: device, choice: choice) {
            _ = await makeEdit(device: device, edit)
        }
        let before = await state(of: device)
        await simulated.crash(.random(seed: powerSeed))
        if ended == nil { statistics.crashesMidRequest += 1 }
        await restartAndCompare(device: device, expected: before, what: ended == nil ? "a power cut while a request was held" : "a power cut at rest")
    }

    /// Makes one edit if it applies; records it in the ledger when the store acknowledges it.
    func makeEdit(device: Int, _ edit: SimulationEdit) async -> Bool {
        guard let store = devices[device].store, let before = try? await store.currentState() else { return false }
        let key = edit.key
        let visible = before.visibleFields(of: key) != nil
        var returnedID: OperationID?
        do {
            switch edit {
            case .create(let kind, let id, let fields):
                guard !visible else { return false }
                try await store.create(kind, id: id, fields: fields)
            case .update(let kind, let id, let fields):
                guard visible else { return false }
                returnedID = try await store.update(kind, id: id, changes: fields)
            case .delete(let kind, let id):
                guard visible else { return false }
                returnedID = try await store.delete(kind, id: id)
            }
        } catch {
            return false
        }
        statistics.operations += 1
        guard let after = try? await store.currentState() else { return true }
        account(device: device, edit: edit, before: before, after: after, returnedID: returnedID, interrupted: false)
        return true
    }

    /// Records what an edit did to the outbox: its operation (open, merged
    /// into an earlier one, or cancelled with it), the operations it
    /// cancelled, and, for a delete, that the record must not come back.
    /// `interrupted`: the store said the edit failed, but it survived a crash.
    func account(device: Int, edit: SimulationEdit, before: StoreState, after: StoreState, returnedID: OperationID?, interrupted: Bool) {
        let sequence = counter.next()
        let key = edit.key
        let beforeIDs = Set(before.outbox.operations.map(\.id))
        let afterIDs = Set(after.outbox.operations.map(\.id))
        let newID = returnedID ?? after.outbox.operations.first { !beforeIDs.contains($0.id) }?.id
        let removed = before.outbox.operations.filter { !afterIDs.contains($0.id) }
        for entry in removed where ledger[entry.id] != nil {
            ledger[entry.id]!.state = .cancelled(sent: entry.sent)
        }
        let changedVisibility = (before.visibleFields(of: key) != nil) != (after.visibleFields(of: key) != nil)
        let madeSomething = newID != nil || !removed.isEmpty || after.outbox.operations != before.outbox.operations
        if interrupted && !madeSomething && !changedVisibility { return }
        let label = "\(name(device)) \(edit.text) (step \(currentStep)\(interrupted ? ", reported failed, survived the crash" : ""))"
        var newState: LedgerEntry.State?
        if let newID {
            var state = LedgerEntry.State.open
            if !afterIDs.contains(newID) {
                // Merged into an earlier queued operation (its content changed), or cancelled with it.
                let merged = before.outbox.operations.first { afterIDs.contains($0.id) && after.outbox[$0.id]?.operation != $0.operation && $0.key == key }
                state = merged.map { .coalesced(into: $0.id) } ?? .cancelled(sent: false)
            }
            newState = state
            ledger[newID] = LedgerEntry(device: device, text: label, step: currentStep, state: state)
            openIDs[device].append(newID)
        } else if !interrupted {
            fail("nothing-lost", "\(label) was acknowledged but left no trace in the outbox")
            return
        }
        switch edit {
        case .create, .update:
            // The user sees the record and edits it: a deletion before this one is settled.
            deletions[device][key] = nil
        case .delete:
            // A delete cancelled together with a create that never left the device deleted only a local record.
            let cancelled: Bool
            if case .cancelled? = newState { cancelled = true } else { cancelled = newID == nil }
            let withUnsentCreate = cancelled && removed.contains { $0.key == key && $0.operation.kind == .create && !$0.sent }
            if !withUnsentCreate, let newID { deletions[device][key] = Deletion(operationID: newID, sequence: sequence, step: currentStep) }
        }
    }

    // MARK: Invariants

    func checkInvariants() async {
        for device in devices.indices {
            guard let store = devices[device].store, let state = try? await store.currentState() else {
                fail("replay-equals-state", "\(name(device))'s store cannot be read (status \(await devices[device].statusName()))")
                return
            }
            await checkLedger(device: device, state: state)
            await checkResurrection(device: device, state: state)
            if violation != nil { return }
        }
        statistics.invariantChecks += 1
        let doubles = await log.doubleApplications
        if let first = doubles.first { fail("no-double-apply", first) }
        for kind in Simulation.kinds {
            for id in Simulation.pool[kind]! {
                let key = RecordKey(kind: kind, id: id)
                statistics.invariantChecks += 1
                let live: Bool
                do throws(TransportError) { live = try await server.row(kind: kind, id: id) != nil } catch {
                    fail("server", "reading \(kind) \(id) from the server failed: \(error)")
                    return
                }
                guard live else { continue }
                let (created, deleted) = await log.lastChanges(of: key)
                if let deleted, deleted > (created ?? Int.min) {
                    fail("no-resurrection", "the server holds \(kind) \(id) live although its last change was a delete and nothing created it since")
                }
            }
        }
    }

    func checkLedger(device: Int, state: StoreState) async {
        let queued = Set(state.outbox.operations.map(\.id))
        let surfaced = Set(state.conflicts.map(\.id)).union(state.rejections.map(\.operation.id))
        let replacements = Set(state.conflicts.compactMap { $0.resolution.replacement?.id })
        // Operations nobody made must not appear (a conflict policy's replacement may).
        for entry in state.outbox.operations where ledger[entry.id] == nil {
            statistics.invariantChecks += 1
            if replacements.contains(entry.id) {
                ledger[entry.id] = LedgerEntry(device: device, text: "\(name(device)) \(entry.operation.kind) \(entry.operation.entity) "
                    + "\(entry.operation.recordID) (queued by a conflict policy, step \(currentStep))",
                    step: currentStep, state: .open)
                openIDs[device].append(entry.id)
            } else {
                fail("replay-equals-state", "\(name(device))'s outbox holds \(entry.operation.kind) \(entry.operation.entity) "
                    + "\(entry.operation.recordID), an operation the app never made")
                return
            }
        }
        var stillOpen: [OperationID] = []
        defer { openIDs[device] = stillOpen }
        for id in openIDs[device] {
            guard let entry = ledger[id] else { continue }
            statistics.invariantChecks += 1
            if case .cancelled(let sent) = entry.state {
                if queued.contains(id) {
                    fail("replay-equals-state", "\(entry.text) was cancelled by a later edit, but it is queued again")
                    return
                }
                // Only an operation marked as possibly sent can have left the device.
                if sent {
                    if await log.wasReceived(id) {
                        fail("no-resurrection", "\(entry.text) was cancelled on the device by a later edit, but it reached the server")
                        return
                    }
                    stillOpen.append(id)
                }
                continue
            }
            var target = id
            var hops = 0
            while case .coalesced(let into)? = ledger[target]?.state, hops < 64 {
                target = into
                hops += 1
            }
            if queued.contains(target) {
                stillOpen.append(id)
                continue
            }
            var settled = surfaced.contains(target)
            if !settled { settled = await log.wasApplied(target) }
            if settled {
                ledger[id]!.state = .settled
                continue
            }
            if case .cancelled? = ledger[target]?.state {
                stillOpen.append(id)
                continue
            }
            fail("nothing-lost", "\(entry.text) was acknowledged, but it is not queued, the server never applied it, "
                + "and no conflict or rejection reports it")
            return
        }
    }

    func checkResurrection(device: Int, state: StoreState) async {
        let surfaced = Set(state.conflicts.map(\.id))
        for key in deletions[device].keys.sorted() {
            let deletion = deletions[device][key]!
            statistics.invariantChecks += 1
            guard state.visibleFields(of: key) != nil else { continue }
            if surfaced.contains(deletion.operationID) { continue }
            if state.outbox[deletion.operationID]?.quarantined == true { continue }
            let creates = await log.creates(of: key)
            if creates.contains(where: { $0.device != name(device) && $0.sequence > deletion.sequence }) { continue }
            fail("no-resurrection", "\(name(device)) shows \(key.kind) \(key.id) again, which its user deleted at step \(deletion.step), "
                + "and no later create or conflict explains it")
            return
        }
    }

    // MARK: The end: faults stop, every device syncs twice

    func finish() async {
        for (index, device) in devices.enumerated() {
            if device.isDown {
                do { try await device.restart() } catch {
                    fail("convergence", "\(name(index)) could not reopen its journal: \(error)")
                    return
                }
            }
            while device.isHolding { _ = try? await device.release() }
            await device.setOnline(true)
        }
        for kind in Simulation.kinds { for id in Simulation.pool[kind]! { await server.clearRecordFaults(kind: kind, id: id) } }
        for device in devices {
            guard let store = device.store else { continue }
            for entry in (try? await store.quarantinedOperations()) ?? [] { try? await store.retryQuarantined(entry.id) }
        }
        for round in 1...2 {
            for (index, device) in devices.enumerated() {
                await clock.advance(by: 3_600_000)
                statistics.syncs += 1
                let outcome = try? await device.sync()
                guard case .ok? = outcome else {
                    fail("convergence", "\(name(index))'s sync in final round \(round) ended \(outcome.map { "\($0)" } ?? "without an outcome")")
                    return
                }
            }
        }
        await checkInvariants()
        if violation != nil { return }
        for (index, device) in devices.enumerated() {
            guard let store = device.store else { continue }
            statistics.invariantChecks += 1
            let queued = (try? await store.pendingOperations()) ?? []
            if !queued.isEmpty {
                fail("convergence", "\(name(index))'s outbox still holds \(queued.count) operation(s) after two syncs without faults: "
                    + queued.map(ScenarioRunner.describe).joined(separator: ", "))
                return
            }
            for kind in Simulation.kinds {
                statistics.invariantChecks += 1
                let local = ((try? await store.records(kind)) ?? []).map { "\($0.id) \(ScenarioValue.format($0.fields))" }
                let remote: [String]
                do throws(TransportError) {
                    remote = try await server.rows(kind: kind).map { "\($0.id) \(ScenarioValue.format($0.fields))" }
                } catch {
                    fail("server", "pulling the server's \(kind)s failed: \(error)")
                    return
                }
                if local != remote {
                    fail("convergence", "\(name(index)) shows \(kind)s [\(local.joined(separator: "; "))] but the server holds [\(remote.joined(separator: "; "))]")
                    return
                }
            }
            // The converged state survives a restart: replay equals state.
            let before = await state(of: index)
            do { try await device.restart() } catch {
                fail("replay-equals-state", "\(name(index)) could not reopen its journal at the end: \(error)")
                return
            }
            statistics.invariantChecks += 1
            if let before, let reopened = await state(of: index), reopened != before {
                fail("replay-equals-state", "\(name(index))'s journal replays to a different state at the end: " + difference(before, reopened))
                return
            }
        }
    }
}
