import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// One failed expectation or command of a scenario, naming file, line and what was seen.
public struct ScenarioFailure: Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var file: String
    /// 1-based line.
    public var line: Int
    /// The command as written.
    public var command: String
    /// What was seen instead.
    public var seen: String
    /// `file:line: command: seen`.
    public var description: String { "\(file):\(line): \(command): \(seen)" }
}

/// What running one scenario found.
public struct ScenarioReport: Sendable, Hashable {
    /// The file.
    public var file: String
    /// Commands run (the run stops at a command that cannot run).
    public var commandsRun: Int
    /// Expectations checked.
    public var expectationsChecked: Int
    /// Failures, in line order; empty when the scenario passed.
    public var failures: [ScenarioFailure]
    /// Whether every expectation held and every command ran.
    public var passed: Bool { failures.isEmpty }
}

/// Runs a ``Scenario`` against fresh ``SimulatedDevice``s and a fresh
/// ``ReferenceServer``. A failed expectation is recorded and the run goes on;
/// a command that cannot run (an update of a record the device does not
/// show, a release with nothing held) is recorded and ends the run.
///
/// ```swift
/// let scenario = try Scenario.parse(text, file: "in-flight-create-deleted.scenario")
/// let report = await ScenarioRunner.run(scenario)
/// for failure in report.failures { print(failure) }   // file:line: command: what was seen
/// ```
public enum ScenarioRunner {
    /// The kinds scenario devices pull: every kind the scenario names.
    static func kinds(of scenario: Scenario) -> [String] {
        var kinds = Set<String>()
        for step in scenario.steps {
            switch step.command {
            case .serverCreate(let kind, _, _, _), .serverUpdate(let kind, _, _), .serverDelete(let kind, _),
                 .serverReject(let kind, _), .serverFail(let kind, _, _), .serverClear(let kind, _),
                 .create(_, let kind, _, _), .update(_, let kind, _, _), .delete(_, let kind, _), .setPolicy(_, let kind, _):
                kinds.insert(kind)
            case .expect(let expectation):
                switch expectation {
                case .deviceHas(_, let kind, _, _), .deviceLacks(_, let kind, _), .serverHas(let kind, _, _), .serverLacks(let kind, _):
                    kinds.insert(kind)
                default: break
                }
            default: break
            }
        }
        return kinds.sorted()
    }

    /// Runs `scenario` and reports what failed.
    public static func run(_ scenario: Scenario) async -> ScenarioReport {
        let server = ReferenceServer()
        let clock = ManualClock(wallTimeAtStart: Date(timeIntervalSince1970: 0))
        let kinds = Self.kinds(of: scenario)
        var devices: [String: SimulatedDevice] = [:]
        var report = ScenarioReport(file: scenario.file, commandsRun: 0, expectationsChecked: 0, failures: [])
        for step in scenario.steps {
            report.commandsRun += 1
            do throws(DeviceError) {
                if case .expect(let expectation) = step.command {
                    report.expectationsChecked += 1
                    if let seen = try await check(expectation, devices: devices, server: server) {
                        report.failures.append(ScenarioFailure(file: scenario.file, line: step.line, command: step.text, seen: seen))
                    }
                } else {
                    try await perform(step.command, devices: &devices, server: server, clock: clock, kinds: kinds)
                }
            } catch {
                report.failures.append(ScenarioFailure(file: scenario.file, line: step.line, command: step.text,
                                                       seen: "could not run: \(error.description)"))
                break
            }
        }
        // Held requests left at the end are released, so no task outlives the run.
        // Engines that scheduled their own syncs stop, so none outlives the run either.
        for device in devices.values.sorted(by: { $0.name < $1.name }) {
            await device.stopLive()
            while device.isHolding { _ = try? await device.release() }
        }
        return report
    }

    static func device(_ name: String, in devices: [String: SimulatedDevice]) throws(DeviceError) -> SimulatedDevice {
        guard let device = devices[name] else { throw DeviceError(description: "unknown device \(name)") }
        return device
    }

    static func perform(_ command: ScenarioCommand, devices: inout [String: SimulatedDevice], server: ReferenceServer,
                        clock: ManualClock, kinds: [String]) async throws(DeviceError) {
        switch command {
        case .device(let name, let user):
            devices[name] = try await SimulatedDevice(name: name, user: user, server: server, clock: clock, kinds: kinds,
                                                      jitterSeed: UInt64(devices.count + 1))
        case .serverCreate(let kind, let id, let user, let fields):
            await server.write(user: user, kind: kind, id: id, fields: fields)
        case .serverUpdate(let kind, let id, let fields):
            guard await server.update(kind: kind, id: id, changes: fields) != nil else {
                throw DeviceError(description: "the server has no live \(kind) \(id) to update")
            }
        case .serverDelete(let kind, let id):
            guard await server.delete(kind: kind, id: id) != nil else {
                throw DeviceError(description: "the server has no live \(kind) \(id) to delete")
            }
        case .serverTick(let milliseconds):
            await server.tick(milliseconds)
        case .serverMode(let exactlyOnce):
            await server.setRemembersOperationIDs(exactlyOnce)
        case .serverReject(let kind, let id):
            await server.rejectPermanently(kind: kind, id: id, reason: "rejected by the scenario")
        case .serverFail(let kind, let id, let times):
            await server.failTransiently(kind: kind, id: id, reason: "failing by the scenario", times: times)
        case .serverClear(let kind, let id):
            await server.clearFailures(kind: kind, id: id)
        case .wait(let milliseconds):
            await clock.advance(byMilliseconds: milliseconds)
        case .online(let name, let online):
            try await device(name, in: devices).setOnline(online)
        case .create(let name, let kind, let id, let fields):
            let store = try device(name, in: devices).liveStore()
            do { try await store.create(kind, id: id, fields: fields) } catch { throw DeviceError(description: error.description) }
        case .update(let name, let kind, let id, let fields):
            let store = try device(name, in: devices).liveStore()
            do { try await store.update(kind, id: id, changes: fields) } catch { throw DeviceError(description: error.description) }
        case .delete(let name, let kind, let id):
            let store = try device(name, in: devices).liveStore()
            do { try await store.delete(kind, id: id) } catch { throw DeviceError(description: error.description) }
        case .sync(let name, let disturbance):
            try await device(name, in: devices).sync(disturbance)
        case .release(let name):
            try await device(name, in: devices).release()
        case .crash(let name):
            try await device(name, in: devices).crash(.loseUnsynced)
        case .restart(let name):
            try await device(name, in: devices).restart()
        case .retire(let name):
            try await device(name, in: devices).retire()
        case .reopen(let name):
            try await device(name, in: devices).reopen()
        case .setPullLimit(let name, let limit):
            try await device(name, in: devices).setPullLimit(limit)
        case .setBatch(let name, let size):
            try await device(name, in: devices).setBatchSize(size)
        case .setPolicy(let name, let kind, let policy):
            try await device(name, in: devices).setPolicy(policy.policy, for: kind)
        case .start(let name, let idle, let waits):
            try await device(name, in: devices).startLive(idlePullMilliseconds: idle, changeWaits: waits)
        case .stop(let name):
            try await device(name, in: devices).stopLive()
        case .active(let name):
            try await device(name, in: devices).becomeActive()
        case .notified(let name):
            try await device(name, in: devices).awaitNotification()
        case .expect:
            break
        }
    }

    /// `nil` when the expectation holds, else what was seen.
    static func check(_ expectation: ScenarioExpectation, devices: [String: SimulatedDevice],
                      server: ReferenceServer) async throws(DeviceError) -> String? {
        switch expectation {
        case .deviceHas(let name, let kind, let id, let fields):
            let store = try device(name, in: devices).liveStore()
            let record: StoreRecord?
            do { record = try await store.record(kind, id: id) } catch { return "\(name) cannot read: \(error)" }
            guard let record else { return "\(name) lacks \(kind) \(id)" }
            return mismatch(expected: fields, actual: record.fields, owner: "\(name) has \(kind) \(id)")
        case .deviceLacks(let name, let kind, let id):
            let store = try device(name, in: devices).liveStore()
            let record: StoreRecord?
            do { record = try await store.record(kind, id: id) } catch { return "\(name) cannot read: \(error)" }
            guard let record else { return nil }
            return "\(name) has \(kind) \(id) \(ScenarioValue.format(record.fields))"
        case .serverHas(let kind, let id, let fields):
            guard let row = await server.row(kind: kind, id: id) else { return "the server lacks \(kind) \(id)" }
            return mismatch(expected: fields, actual: row.fields, owner: "the server has \(kind) \(id)")
        case .serverLacks(let kind, let id):
            guard let row = await server.row(kind: kind, id: id) else { return nil }
            return "the server has \(kind) \(id) \(ScenarioValue.format(row.fields))"
        case .outbox(let name, let expected):
            let store = try device(name, in: devices).liveStore()
            let queued: [OutboxOperation]
            do { queued = try await store.outboxOperations() } catch { return "\(name) cannot read: \(error)" }
            if queued.count == expected { return nil }
            return "\(name)'s outbox holds \(queued.count): " + (queued.isEmpty ? "nothing" : queued.map { describe($0.operation, sent: $0.sent, quarantined: $0.quarantined) }.joined(separator: ", "))
        case .conflicts(let name, let expected):
            let store = try device(name, in: devices).liveStore()
            let conflicts: [ConflictRecord]
            do { conflicts = try await store.conflicts() } catch { return "\(name) cannot read: \(error)" }
            if conflicts.count == expected { return nil }
            return "\(name) has \(conflicts.count) conflict(s)" + (conflicts.isEmpty ? "" : ": " + conflicts.map {
                "\($0.shape) on \($0.operation.entity) \($0.operation.recordID) (\($0.resolution.strategy))"
            }.joined(separator: ", "))
        case .merges(let name, let expected):
            let store = try device(name, in: devices).liveStore()
            let merges: [ConflictRecord]
            do { merges = try await store.merges() } catch { return "\(name) cannot read: \(error)" }
            if merges.count == expected { return nil }
            return "\(name) has \(merges.count) merge(s)" + (merges.isEmpty ? "" : ": " + merges.map {
                "\($0.operation.entity) \($0.operation.recordID)"
            }.joined(separator: ", "))
        case .quarantined(let name, let expected):
            let store = try device(name, in: devices).liveStore()
            let quarantined: [OutboxEntryStatus]
            do { quarantined = try await store.quarantinedOperations() } catch { return "\(name) cannot read: \(error)" }
            if quarantined.count == expected { return nil }
            return "\(name) has \(quarantined.count) quarantined: " + (quarantined.isEmpty ? "none" : quarantined.map { describe($0.operation, sent: $0.sent, quarantined: true) }.joined(separator: ", "))
        case .requests(let name, let expected):
            let seen = try await device(name, in: devices).requestCount()
            return seen == expected ? nil : "\(name)'s transport has seen \(seen) request(s)"
        case .outcome(let name, let expected):
            let device = try device(name, in: devices)
            guard let outcome = device.lastOutcome else { return "\(name) has not synced yet" }
            return outcome.name == expected ? nil : "\(name)'s last sync: \(outcome)"
        case .status(let name, let expected):
            let status = try await device(name, in: devices).statusName()
            return status == expected ? nil : "\(name)'s status is \(status)"
        case .serverApplied(let expected):
            let applied = await server.appliedMutations
            return applied == expected ? nil : "the server applied \(applied) mutation(s)"
        }
    }

    static func describe(_ operation: JournalOperation, sent: Bool, quarantined: Bool) -> String {
        var text = "\(operation.kind) \(operation.entity) \(operation.recordID)"
        var flags: [String] = []
        if sent { flags.append("sent") }
        if quarantined { flags.append("quarantined") }
        if !flags.isEmpty { text += " (\(flags.joined(separator: ", ")))" }
        return text
    }

    /// `nil` when `actual` has every expected value, else what differs.
    static func mismatch(expected: [String: FieldValue], actual: [String: FieldValue], owner: String) -> String? {
        let wrong = expected.keys.sorted().filter { actual[$0] != expected[$0] }
        if wrong.isEmpty { return nil }
        let seen = wrong.map { "\($0)=" + (actual[$0].map(ScenarioValue.format) ?? "(missing)") }.joined(separator: " ")
        return "\(owner) with \(seen) (all fields: \(ScenarioValue.format(actual)))"
    }
}
