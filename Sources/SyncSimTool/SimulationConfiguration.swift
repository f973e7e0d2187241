import Foundation
import SyncJournalCommandLine

/// How a random run is set up (`sync-sim --seed S --devices D --steps N [--faults LIST]`).
public struct SimulationConfiguration: Sendable, Hashable {
    /// The seed of every random choice.
    public var seed: UInt64
    /// Devices (1 to 26).
    public var devices: Int
    /// Users (1 to 8): device *i* syncs as user `u(i mod users + 1)`. With
    /// more than one, u1 owns a shared list of pins whose other members
    /// start as editors (``SimulationFault/membership`` changes them).
    public var users: Int = 1
    /// Steps before the faults stop and every engine syncs on its own schedule.
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
    public init(seed: UInt64, devices: Int = 3, steps: Int = 200, faults: Set<SimulationFault> = SimulationFault.defaultSet,
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
    ///
    /// - Throws: ``Problem`` naming the bad or missing argument.
    public init(arguments: [String]) throws(Problem) {
        do throws(CommandLineError) {
            let parsed = try SyncSimCommand.syntax.parse(arguments)
            if let extra = parsed.positionals.first { throw .unexpectedArgument(extra) }
            guard let seed = try parsed.unsigned("--seed") else { throw .invalidCombination("--seed is required") }
            try self.init(parsed, seed: seed)
        } catch {
            throw Problem(description: error == .helpRequested ? "help requested" : error.description)
        }
    }

    /// The configuration a parsed `sync-sim` command line asks for, with `seed`
    /// (a sweep gives each run its own).
    ///
    /// - Throws: ``CommandLineError`` naming a bad value.
    init(_ parsed: ParsedCommandLine, seed: UInt64) throws(CommandLineError) {
        let knownFaults = SimulationFault.allCases.map(\.rawValue).joined(separator: ",")
        let faults = try parsed.value("--faults", expected: "fault classes among \(knownFaults), default, all, or none") { text -> Set<SimulationFault>? in
            if text == "none" { return [] }
            var faults: Set<SimulationFault> = []
            for name in text.split(separator: ",") {
                // `default` and `all` stand for their sets, so `default,attachments` adds one class to the default.
                if name == "all" { faults.formUnion(SimulationFault.allCases); continue }
                if name == "default" { faults.formUnion(SimulationFault.defaultSet); continue }
                guard let fault = SimulationFault(rawValue: String(name)) else { return nil }
                faults.insert(fault)
            }
            return faults
        }
        self.init(seed: seed,
                  devices: try parsed.integer("--devices", in: 1...26) ?? 3,
                  steps: try parsed.integer("--steps", atLeast: 0) ?? 200,
                  faults: faults ?? SimulationFault.defaultSet,
                  shrink: !parsed.has("--no-shrink"))
        users = try parsed.integer("--users", in: 1...8) ?? 1
        if users > devices { throw .invalidCombination("--users \(users) needs at least as many devices (--devices \(devices))") }
        server = try parsed.value("--server", expected: "an http(s) URL such as http://127.0.0.1:8787") { text -> URL? in
            guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else { return nil }
            return url
        }
        token = try parsed.nonEmptyValue("--token") ?? "dev-token"
        if users > 1 && server != nil {
            throw .invalidCombination("--users above 1 runs against the in-memory server only (one token is one user)")
        }
    }
}
