import Foundation
import SyncJournalCore
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

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
    /// Virtual time: from 0 against the in-memory server (byte-deterministic
    /// runs), from the wall clock against a real one, which judges an edit it
    /// no longer remembers by when it was queued, as a device's clock says.
    let clock: ManualClock
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
    /// Per device, the contents it attached in edits the store took.
    var attachedContents: [Int: Set<ContentHash>] = [:]
    /// Contents a restore of the server's database took away: until the
    /// devices that hold them reconcile, the records that name them are
    /// not openable anywhere else (checked again at the end).
    var contentsLostInRestores: Set<ContentHash> = []

    init(configuration: SimulationConfiguration) {
        self.configuration = configuration
        generator = SeededGenerator(seed: configuration.seed)
        if let url = configuration.server {
            server = HTTPSimulationServer(baseURL: url, token: configuration.token)
            clock = ManualClock(wallTimeAtStart: Date())
        } else {
            server = ReferenceSimulationServer()
            clock = ManualClock(wallTimeAtStart: Date(timeIntervalSince1970: 0))
        }
    }

    static func execute(_ configuration: SimulationConfiguration, replay: [SimulationStep]?) async -> Result {
        let run = SimulationRun(configuration: configuration)
        var result = await run.run(replay: replay)
        result.serverSummary = run.server.summary
        return result
    }

    /// Records the first violation of the run; later ones are consequences.
    func fail(_ invariant: Invariant, _ detail: String) {
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
                    name: name(index), user: Simulation.user(ofDevice: index, users: configuration.users), server: server, clock: clock,
                    kinds: Simulation.kinds, checkpointThreshold: 0, jitterSeed: setup.next(), log: log, sequence: counter,
                    batchSize: Int.random(in: 1...4, using: &setup), pullLimit: Int.random(in: 2...5, using: &setup), policies: perKind,
                    followsSharedSpaces: configuration.users > 1)
                devices.append(device)
            } catch {
                fail(.replayEqualsState, "\(name(index)) could not open an empty journal: \(error)")
                return Result(violation: violation, trace: [], statistics: statistics)
            }
            deletions.append([:])
            openIDs.append([])
        }
        if configuration.faults.contains(.attachments) {
            await server.limitAttachments(maximumBytes: SimulationContents.serverMaximumBytes,
                                          graceMilliseconds: SimulationContents.serverGraceMilliseconds)
        }
        if configuration.users > 1 {
            // u1 owns the shared list; every other user starts as an editor.
            do throws(TransportError) {
                try await server.change(.create(Simulation.sharedList, name: "Trip pins"), user: "u1")
                for other in 2...configuration.users {
                    try await server.change(.setMember(Simulation.sharedList, user: "u\(other)", role: .editor), user: "u1")
                }
            } catch {
                fail(.server, "sharing the list failed: \(error)")
                return Result(violation: violation, trace: [], statistics: statistics)
            }
        }
        var trace: [SimulationStep] = []
        let total = replay?.count ?? configuration.steps
        for index in 0..<total {
            currentStep = index + 1
            let step: SimulationStep
            if let replay { step = replay[index] } else { step = await generate() }
            trace.append(step)
            statistics.steps += 1
            if step.advance > 0 { await clock.advance(byMilliseconds: step.advance) }
            if step.tick > 0 { await server.tick(step.tick) }
            await perform(step.action)
            if violation == nil { await checkInvariants() }
            if violation != nil {
                statistics.attachmentsUploaded = await log.uploadsCompleted
                return Result(violation: violation, trace: trace, statistics: statistics)
            }
        }
        currentStep = total + 1
        await finish()
        var conflicts = 0
        var rejections = 0
        for device in devices {
            conflicts += ((try? await device.store?.conflicts())?.count) ?? 0
            rejections += ((try? await device.store?.rejections())?.count) ?? 0
        }
        statistics.conflicts = conflicts
        statistics.rejections = rejections
        statistics.attachmentsUploaded = await log.uploadsCompleted
        return Result(violation: violation, trace: trace, statistics: statistics)
    }
}
