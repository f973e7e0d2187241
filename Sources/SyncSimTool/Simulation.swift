import Foundation
import SyncJournalProtocol

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
/// - **space-membership** (with more than one user): after a device's pull,
///   it shows no record of a shared space its user is not a member of then,
///   and its spaces and roles are the server's; a rejected edit (a viewer's,
///   or a removed member's) is surfaced, which nothing-lost checks;
/// - **attachment-available** (with `attachments`): after a device's whole
///   sync, every file of a record it shows is on the device or held by the
///   server for its user, and a file the user opens downloads whole when it
///   is not here;
/// - **attachment-kept-until-uploaded** (with `attachments`): a file a device
///   attached stays on its disk until the server holds it, while a queued
///   edit of the device refers to it;
/// - **convergence**: once faults stop and every engine has synced on its own
///   schedule for two hours (no sync asked for by hand), every device shows
///   what the server holds and every outbox is empty.
///
/// ```swift
/// let outcome = await Simulation.runWithShrinking(SimulationConfiguration(seed: 7, devices: 3, steps: 300))
/// print(outcome.report, terminator: "")
/// ```
public enum Simulation {
    static let pool: [String: [String]] = ["note": ["n0", "n1", "n2", "n3"], "pin": ["p0", "p1", "p2", "p3", "p4", "p5"]]
    static let kinds = ["note", "pin"]
    /// The shared list of pins that u1 owns when a run has more than one user.
    static let sharedList = SpaceID("5a4ed000-0000-4000-8000-000000000001")!
    /// The user device `device` syncs as, among `users`.
    static func user(ofDevice device: Int, users: Int) -> String { "u\(device % max(1, users) + 1)" }
    /// The version of the note model a device runs: every second device has the newer app.
    static func modelVersion(ofDevice device: Int) -> Int { device % 2 == 1 ? 2 : 1 }

    /// Runs `configuration`; on a violation, shrinks the trace and reports it.
    public static func runWithShrinking(_ configuration: SimulationConfiguration) async -> SimulationOutcome {
        let first = await SimulationRun.execute(configuration, replay: nil)
        let header = "sync-sim seed=\(configuration.seed) devices=\(configuration.devices)"
            + (configuration.users > 1 ? " users=\(configuration.users)" : "") + " steps=\(configuration.steps)"
            + (first.serverSummary.isEmpty ? "" : " " + first.serverSummary)
        let stats = first.statistics
        guard let violation = first.violation else {
            let report = "\(header): \(stats.operations) operations, \(stats.syncs) syncs, \(stats.crashes) crashes "
                + "(\(stats.crashesMidRequest) mid-request, \(stats.crashesMidCheckpoint) mid-checkpoint, \(stats.crashesMidWrite) mid-write), "
                + "\(stats.conflicts) conflicts, "
                + (stats.serverRestores > 0 ? "\(stats.serverRestores) server restores, \(stats.reconciliations) reconciliations, " : "")
                + (configuration.users > 1 ? "\(stats.membershipChanges) membership changes, \(stats.rejections) rejected edits surfaced, " : "")
                + (configuration.faults.contains(.attachments)
                    ? "\(stats.attachmentsAdded) attachments added, \(stats.attachmentsUploaded) uploaded, \(stats.attachmentsDownloaded) downloaded, "
                        + "\(stats.crashesMidUpload) crashes mid-upload, " : "")
                + "\(stats.invariantChecks) invariant checks: all held, converged\n"
            return SimulationOutcome(violation: nil, statistics: stats, report: report)
        }
        var lines: [String] = []
        let at = violation.step > configuration.steps ? "the end (faults stopped, engines on their own schedule)" : "step \(violation.step)"
        lines.append("\(header): VIOLATION at \(at): \(violation)")
        lines.append("reproduce: sync-sim --seed \(configuration.seed) --devices \(configuration.devices)"
            + (configuration.users > 1 ? " --users \(configuration.users)" : "") + " --steps \(configuration.steps)"
            // Every class is not the default set: `all` must be said to repeat the run.
            + " --faults " + (configuration.faults == Set(SimulationFault.allCases) ? "all" : faultList(configuration.faults))
            + (configuration.server.map { " --server \($0.absoluteString)" } ?? "")
            + (configuration.server == nil ? "" : " (timing differs between runs against a real server: it may not repeat)"))
        var trace = Array(first.trace.prefix(violation.step))
        var shrunkViolation = violation
        var runs = 0
        if configuration.server != nil {
            lines.append("not shrunk: against a real server a shorter run does not repeat the same timing")
        }
        if configuration.shrink && configuration.server == nil {
            (trace, shrunkViolation, runs) = await TraceShrinker.shrink(configuration, trace: trace, violation: violation)
        }
        lines.append("shrunk trace: \(trace.count) of \(min(violation.step, first.trace.count)) steps (\(runs) shrinking runs), "
            + "then the faults stop and every engine syncs on its own schedule for two hours:")
        for (index, step) in trace.enumerated() { lines.append("  \(index + 1). \(step.text)") }
        let shrunkAt = shrunkViolation.step > trace.count ? "the end (faults stopped, engines on their own schedule)" : "step \(shrunkViolation.step)"
        lines.append("shrunk run fails at \(shrunkAt): \(shrunkViolation)")
        return SimulationOutcome(violation: violation, statistics: stats, report: lines.joined(separator: "\n") + "\n")
    }

    static func faultList(_ faults: Set<SimulationFault>) -> String {
        faults.isEmpty ? "none" : SimulationFault.allCases.filter(faults.contains).map(\.rawValue).joined(separator: ",")
    }
}
