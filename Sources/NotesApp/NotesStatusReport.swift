import Foundation
import SyncJournal
import SyncJournalCommandLine

/// What `notes status` prints: the engine's sync status after one sync,
/// as `name: value` lines for people or as one JSON object.
struct NotesStatusReport: Sendable, Hashable {
    /// The server, as given with `--server`.
    var server: String
    /// The engine's status once the sync ended.
    var status: SyncStatus
    /// How the sync this run made ended.
    var attempt: SyncOutcome
    /// When a sync last ended well, on the wall clock (`nil`: not in this run;
    /// `notes` keeps no record of earlier runs' syncs).
    var lastSuccessfulSync: Date?

    /// Syncs once with `engine`, then reads its status; the last good sync
    /// is on the wall time of the engine's clock.
    static func afterOneSync(of engine: SyncEngine, server: URL) async -> NotesStatusReport {
        let outcome = await engine.sync()
        let status = await engine.status
        return NotesStatusReport(server: server.absoluteString, status: status, attempt: outcome,
                                 lastSuccessfulSync: status.lastSuccessfulSyncAt)
    }

    /// Whether the server answered: it did when it is online, busy, failing
    /// a request or refusing the token; it did not when the device is
    /// offline or nothing answered at its address.
    var serverAnswered: Bool {
        switch status.connectivity {
        case .online, .serverBusy, .failing, .authenticationNeeded, .serverChanged: return true
        case .offline, .noConnection, .serverUnreachable: return false
        }
    }

    /// One `name: value` line each: server, reachable, connectivity, activity,
    /// pending, quarantined, conflicts, this sync, last successful sync, and
    /// `lost spaces` when the user lost a shared space (its notes left the device).
    func text() -> String {
        var lines = [
            "server: \(server)",
            "reachable: \(serverAnswered ? "yes" : "no")",
            "connectivity: \(Self.describe(status.connectivity))",
            "activity: \(Self.name(of: status.activity))",
            "pending: \(status.pendingOperations)",
            "quarantined: \(status.quarantinedOperations)",
            "conflicts: \(status.conflicts)",
            "this sync: \(attempt)",
            "last successful sync: \(lastSuccessfulSync.map(Self.timestamp) ?? "none in this run")",
        ]
        if !status.lostSpaces.isEmpty { lines.append("lost spaces: " + status.lostSpaces.map(\.description).joined(separator: ", ")) }
        return lines.map { $0 + "\n" }.joined()
    }

    /// One JSON object: `server`, `reachable`, `connectivity` (a name),
    /// `reason` (or null), `activity`, `pending`, `quarantined`, `conflicts`,
    /// `thisSync`, `lastSuccessfulSync` (an ISO 8601 time, or null), and
    /// `lostSpaces` (the ids of shared spaces the user lost) when there are any.
    func json() -> String {
        let connectivity = Self.parts(of: status.connectivity)
        var members: [(String, JSONText)] = [
            ("server", .string(server)),
            ("reachable", .bool(serverAnswered)),
            ("connectivity", .string(connectivity.name)),
            ("reason", connectivity.reason.map(JSONText.string) ?? .null),
            ("activity", .string(Self.name(of: status.activity))),
            ("pending", .int(Int64(status.pendingOperations))),
            ("quarantined", .int(Int64(status.quarantinedOperations))),
            ("conflicts", .int(Int64(status.conflicts))),
            ("thisSync", .string(attempt.description)),
            ("lastSuccessfulSync", lastSuccessfulSync.map { .string(Self.timestamp($0)) } ?? .null),
        ]
        if !status.lostSpaces.isEmpty { members.append(("lostSpaces", .array(status.lostSpaces.map { .string($0.description) }))) }
        return JSONText.object(members).serialized
    }

    /// The line `watch` prints (after `notes: `) when the connectivity
    /// becomes `connectivity`; `nil` for online, which `watch` reports only
    /// as the end of a problem.
    static func problem(_ connectivity: SyncStatus.Connectivity, server: String) -> String? {
        let queued = "changes stay queued in the journal"
        switch connectivity {
        case .online:
            return nil
        case .offline:
            return "offline; \(queued)"
        case .noConnection:
            return "cannot reach the server at \(server): no network (offline); retrying, \(queued)"
        case .serverUnreachable(let reason):
            return "cannot reach the server at \(server): \(reason); retrying, \(queued)"
        case .serverBusy(let reason):
            return "the server at \(server) is busy: \(reason); retrying, \(queued)"
        case .failing(let failure):
            return "sync with \(server) failed: \(failure)"
        case .authenticationNeeded(let reason):
            return "the server at \(server) refused the token (\(reason)); syncing is paused until notes runs with a token it accepts"
        case .serverChanged(let mismatch):
            return "\(mismatch); every note is kept; run notes reconcile --server \(server) to upload what the server lacks"
        }
    }

    /// The connectivity's name and, for trouble, its reason.
    static func parts(of connectivity: SyncStatus.Connectivity) -> (name: String, reason: String?) {
        switch connectivity {
        case .online: return ("online", nil)
        case .offline: return ("offline", nil)
        case .noConnection: return ("no connection", nil)
        case .serverUnreachable(let reason): return ("server unreachable", reason)
        case .serverBusy(let reason): return ("server busy", reason)
        case .failing(let failure): return ("failing", failure.description)
        case .authenticationNeeded(let reason): return ("sign-in needed", reason)
        case .serverChanged(let mismatch): return ("server changed", mismatch.description)
        }
    }

    /// The name, then the reason after a colon (unless the reason already starts with the name).
    static func describe(_ connectivity: SyncStatus.Connectivity) -> String {
        let (name, reason) = parts(of: connectivity)
        guard let reason else { return name }
        return reason.hasPrefix(name) ? reason : "\(name): \(reason)"
    }

    /// `idle`, `pushing`, `pulling` or `waiting for changes`.
    static func name(of activity: SyncStatus.Activity) -> String {
        switch activity {
        case .idle: return "idle"
        case .pushing: return "pushing"
        case .pulling: return "pulling"
        case .waitingForChanges: return "waiting for changes"
        }
    }

    /// The time in ISO 8601, UTC, to the second, such as `2026-12-01T13:40:02Z`.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
