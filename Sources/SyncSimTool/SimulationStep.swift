import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

/// A class of fault the random simulator may inject (`--faults LIST`).
public enum SimulationFault: String, CaseIterable, Sendable, Hashable {
    /// Devices go offline and come back.
    case offline
    /// A device dies at rest (process crash or power cut) and restarts from its journal.
    case crash
    /// A device dies while a push (or pull) is held before the server: the server applies it, the reply is lost.
    case crashMidRequest = "crash-mid-request"
    /// The disk freezes at an exact system call inside a checkpoint, then the power is cut.
    case crashMidCheckpoint = "crash-mid-checkpoint"
    /// The disk freezes at an exact system call inside an edit's append, then the power is cut.
    case crashMidWrite = "crash-mid-write"
    /// A request is lost before the server.
    case loseRequest = "lose-request"
    /// The server applies a push and the reply is lost.
    case loseReply = "lose-reply"
    /// A push reaches the server twice.
    case duplicate
    /// Whole requests fail transiently (503), and single records fail transiently on the server.
    case transient
    /// Whole requests are refused (401), and single records are refused permanently on the server.
    case permanent
    /// Another writer creates, changes and deletes rows on the server.
    case otherWriters = "other-writers"
    /// With more than one user (`--users`), the owner of the shared list
    /// makes another user an editor or a viewer, removes them, or they
    /// leave, and they are added back later.
    case membership
    /// The user edits a record while its push is in flight (held), then the request goes on.
    case inFlightEdits = "in-flight-edits"
    /// The server's database is backed up now and then, and restored from
    /// the backup later (it goes back in time); devices reconcile when they
    /// find it. Only with the in-memory server.
    case serverRestore = "server-restore"
    /// Pins hold files: edits attach, replace and clear them (contents
    /// drawn from a small pool, so devices share some), devices open the
    /// files of the pins they show (downloading what is not here) and run
    /// their attachment upkeep, the in-memory server collects contents
    /// nothing refers to after a short grace period, and the transport
    /// faults of the other classes that are on hit uploads and downloads
    /// too, with a device dying while an upload is held.
    case attachments

    /// The fault classes a run injects unless told otherwise: all but
    /// ``serverRestore``, which is asked for by name (or with `all`) while
    /// some of its runs still end in a violation (see the closing report),
    /// and ``attachments``, asked for by name (or with `all`) so that every
    /// seed run without it keeps the trace it had before attachments.
    public static let defaultSet: Set<SimulationFault> = Set(allCases).subtracting([.serverRestore, .attachments])
}

/// One local edit the simulator makes, in the user's personal space or in the shared list.
enum SimulationEdit: Hashable, Sendable {
    case create(kind: String, id: String, fields: [String: FieldValue], space: SpaceID = .personal)
    case update(kind: String, id: String, fields: [String: FieldValue], space: SpaceID = .personal)
    case delete(kind: String, id: String, space: SpaceID = .personal)

    var key: RecordKey {
        switch self {
        case .create(let kind, let id, _, let space), .update(let kind, let id, _, let space), .delete(let kind, let id, let space):
            return RecordKey(kind: kind, id: id, space: space)
        }
    }

    /// The files the edit sets, field by field in name order.
    var attachments: [Attachment] {
        switch self {
        case .create(_, _, let fields, _), .update(_, _, let fields, _):
            return fields.keys.sorted().flatMap { fields[$0]!.attachments }
        case .delete:
            return []
        }
    }

    var text: String {
        let place = key.space.isPersonal ? "" : " in the shared list"
        switch self {
        case .create(let kind, let id, let fields, _): return "create \(kind) \(id)\(place) \(ScenarioValue.format(fields))"
        case .update(let kind, let id, let fields, _): return "update \(kind) \(id)\(place) \(ScenarioValue.format(fields))"
        case .delete(let kind, let id, _): return "delete \(kind) \(id)\(place)"
        }
    }
}

/// A change of one user's membership of the shared list, made by its owner
/// (or, for ``leave``, by the user) from outside the simulated devices.
enum MembershipChange: Hashable, Sendable {
    /// The owner adds the user with `role`, or gives a member `role`.
    case set(user: String, role: SpaceRole)
    /// The owner removes the user.
    case remove(user: String)
    /// The user leaves.
    case leave(user: String)

    var text: String {
        switch self {
        case .set(let user, let role): return "server: the owner makes \(user) \(role == .viewer ? "a viewer" : "an \(role)") of the shared list"
        case .remove(let user): return "server: the owner removes \(user) from the shared list"
        case .leave(let user): return "server: \(user) leaves the shared list"
        }
    }
}

/// A whole-request fault on one sync.
enum SyncFault: String, Hashable, Sendable {
    case none, loseRequest = "lose-request", loseReply = "lose-reply", duplicate, transient, permanent
    /// The connection drops: only aimed at an attachment call.
    case offline
}

/// What one step does. Every choice is made when the step is generated and
/// kept in it, so a trace replays (and shrinks) exactly; a step that no
/// longer applies when replayed (an update of a record the device does not
/// show) does nothing.
enum SimulationAction: Hashable, Sendable {
    case edit(device: Int, SimulationEdit)
    case sync(device: Int, SyncFault)
    case online(device: Int, Bool)
    case writerWrite(kind: String, id: String, fields: [String: FieldValue])
    case writerUpdate(kind: String, id: String, fields: [String: FieldValue])
    case writerDelete(kind: String, id: String)
    case recordFault(kind: String, id: String, permanent: Bool, times: Int)
    case clearRecordFault(kind: String, id: String)
    /// `powerSeed` nil: the process dies (the page cache survives).
    case crash(device: Int, powerSeed: UInt64?)
    /// A sync whose push (or pull) is held; maybe an edit of an in-flight record; then the power is cut.
    case crashMidRequest(device: Int, choice: UInt64?, powerSeed: UInt64)
    /// A sync whose push is held; an edit of an in-flight record; then the request goes on.
    case inFlightEdit(device: Int, choice: UInt64, loseReply: Bool)
    /// The journal is rewritten as a checkpoint (automatic checkpoints are off, so runs repeat exactly).
    case checkpoint(device: Int)
    case crashMidCheckpoint(device: Int, afterCalls: Int, powerSeed: UInt64)
    case crashMidWrite(device: Int, afterCalls: Int, edit: SimulationEdit, powerSeed: UInt64)
    /// The server's database is copied (a backup).
    case serverBackup
    /// The server's database is replaced by the last backup (nothing if none was taken).
    case serverRestore
    /// A user's membership of the shared list changes.
    case membership(MembershipChange)
    /// The user opens the files of a record the device shows: read here, or
    /// downloaded: the first try meets `fault` (unless `none`) once
    /// `afterCalls` download calls passed, then it is tried once more, as a
    /// user tapping again would.
    case openAttachment(device: Int, key: RecordKey, fault: SyncFault, afterCalls: Int)
    /// A sync whose attachment calls meet `fault` after `afterCalls` of them passed.
    case uploadFault(device: Int, afterCalls: Int, fault: SyncFault)
    /// A sync whose attachment call after `afterCalls` passed is held; the
    /// device dies there (`powerSeed` nil: the process is killed) and restarts.
    case crashMidUpload(device: Int, afterCalls: Int, powerSeed: UInt64?)
    /// The device's attachment upkeep: files nothing refers to past the
    /// grace period removed, cached ones past the cache's bound evicted.
    case collectAttachments(device: Int)
    /// The server deletes the contents nothing refers to past its grace period.
    case serverCollectAttachments
}

/// One step: an action, and how far the virtual clocks move before it.
struct SimulationStep: Hashable, Sendable {
    var action: SimulationAction
    /// Milliseconds the devices' clock advances first.
    var advance: Int64
    /// Milliseconds the server's clock advances first (0: writes may share a stamp).
    var tick: Int64

    static func deviceName(_ index: Int) -> String {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        return index < letters.count ? String(letters[index]) : "D\(index)"
    }

    /// The step as a line of a trace.
    var text: String {
        let name = Self.deviceName
        let body: String
        switch action {
        case .edit(let device, let edit): body = "\(name(device)) \(edit.text)"
        case .sync(let device, let fault): body = "\(name(device)) sync" + (fault == .none ? "" : " \(fault.rawValue)")
        case .online(let device, let online): body = "\(name(device)) \(online ? "online" : "offline")"
        case .writerWrite(let kind, let id, let fields): body = "server create \(kind) \(id) \(ScenarioValue.format(fields))"
        case .writerUpdate(let kind, let id, let fields): body = "server update \(kind) \(id) \(ScenarioValue.format(fields))"
        case .writerDelete(let kind, let id): body = "server delete \(kind) \(id)"
        case .recordFault(let kind, let id, let permanent, let times):
            body = permanent ? "server reject \(kind) \(id)" : "server fail \(kind) \(id) \(times)"
        case .clearRecordFault(let kind, let id): body = "server clear \(kind) \(id)"
        case .crash(let device, let seed): body = "\(name(device)) crash (" + (seed == nil ? "process killed" : "power cut") + "), restart"
        case .crashMidRequest(let device, let choice, _):
            body = "\(name(device)) sync hold" + (choice == nil ? "" : ", edit an in-flight record") + ", power cut, restart"
        case .inFlightEdit(let device, _, let loseReply):
            body = "\(name(device)) sync hold, edit an in-flight record, release" + (loseReply ? " (reply lost)" : "")
        case .checkpoint(let device): body = "\(name(device)) checkpoint"
        case .crashMidCheckpoint(let device, let calls, _): body = "\(name(device)) checkpoint, disk frozen after \(calls) calls, power cut, restart"
        case .crashMidWrite(let device, let calls, let edit, _):
            body = "\(name(device)) \(edit.text) with the disk frozen after \(calls) calls, power cut, restart"
        case .serverBackup: body = "server backup"
        case .serverRestore: body = "server restore from the backup"
        case .membership(let change): body = change.text
        case .openAttachment(let device, let key, let fault, let calls):
            let place = key.space.isPersonal ? "" : " in the shared list"
            body = "\(name(device)) opens the files of \(key.kind) \(key.id)\(place)"
                + (fault == .none ? "" : " (\(fault.rawValue) on download call \(calls + 1), then again)")
        case .uploadFault(let device, let calls, let fault):
            body = "\(name(device)) sync, \(fault.rawValue) on attachment call \(calls + 1)"
        case .crashMidUpload(let device, let calls, let seed):
            body = "\(name(device)) sync, attachment call \(calls + 1) held, " + (seed == nil ? "process killed" : "power cut") + ", restart"
        case .collectAttachments(let device): body = "\(name(device)) attachment upkeep"
        case .serverCollectAttachments: body = "server: collects the attachments nothing refers to"
        }
        var clocks: [String] = []
        if advance > 0 { clocks.append("+\(advance) ms") }
        if tick > 0 { clocks.append("server +\(tick) ms") }
        return clocks.isEmpty ? body : body + " [" + clocks.joined(separator: ", ") + "]"
    }
}
