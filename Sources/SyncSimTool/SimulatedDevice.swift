import SyncJournalPlatform
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// A counter shared by the simulator's parts, to order events.
final class EventCounter: Sendable {
    private let value = Mutex(0)
    /// The next number.
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
    /// The last number handed out.
    var current: Int { value.withLock { $0 } }
}

/// Why a device command could not run.
public struct DeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for people.
    public var description: String
}

/// One simulated device: a ``LocalStore`` on its own ``SimulatedDisk``, a
/// ``SyncEngine`` over a ``FaultInjectingTransport`` to the shared
/// ``ReferenceServer``, and the virtual clock. It can crash (the disk loses
/// what was not synced and every descriptor dies), restart from its journal,
/// retire its store and reopen one, and stage races with held requests.
///
/// The engine's scheduler is never started: syncs happen only when asked, so
/// a run repeats exactly.
///
/// ```swift
/// let server = ReferenceServer()
/// let device = try await SimulatedDevice(name: "A", user: "u1", server: server, clock: ManualClock(), kinds: ["pin"])
/// try await device.liveStore().create("pin", id: "p1", fields: [:])
/// let outcome = try await device.sync()
/// ```
public final class SimulatedDevice {
    /// The device's name (`A`).
    public let name: String
    /// The user it syncs as.
    public let user: String
    /// Its disk (one per device).
    public let disk: SimulatedDisk
    /// Its journal's path on the disk.
    public let path: String
    /// The kinds it pulls.
    public let kinds: [String]
    /// A new transport to the server (beneath the fault layer), for each open.
    let makeTransport: @Sendable () -> any SyncTransport
    /// The server's count of applied mutations, where it can be seen.
    let appliedMutations: @Sendable () async -> Int?
    let clock: ManualClock
    let log: ServerLog?
    let sequence: EventCounter?
    let checkpointThreshold: Int
    let jitterSeed: UInt64
    /// Whether the engine pulls the user's shared spaces too.
    var followsSharedSpaces = false

    /// The store in use (`nil` while the device is down after a crash).
    public private(set) var store: LocalStore?
    /// Its engine.
    public private(set) var engine: SyncEngine?
    /// Its transport (a new one per open, so a retired store's held request stays with the old one).
    public private(set) var transport: FaultInjectingTransport?
    /// Whether the device reports no connection.
    public private(set) var offline = false
    /// The outcome of the last sync that ended, `nil` before any.
    public private(set) var lastOutcome: SyncOutcome?
    /// Push batch size, pull page size, and conflict policies (kept across restarts).
    public private(set) var batchSize = 100
    /// Rows per pull page.
    public private(set) var pullLimit = 500
    private var policies: [String: ConflictPolicy] = [:]
    /// How the engine syncs on its own once started (kept across restarts); `nil`: only when told.
    private var live: LiveSettings?
    /// Waits for changes the scenario has seen end (`A notified`), for the current engine.
    private var changeWaitsSeen = 0

    /// What `A start` asked for.
    struct LiveSettings {
        /// Pull this often while idle (milliseconds), or never.
        var idlePullMilliseconds: Int64?
        /// Keep a wait for server changes open.
        var changeWaits: Bool
    }

    /// How long a simulated wait for changes lasts before the engine gives it up as lost (plus the margin).
    static let changeWaitTimeout: Duration = .seconds(60)

    /// A sync waiting on a held request.
    struct HeldSync {
        var transport: FaultInjectingTransport
        var task: Task<SyncOutcome, Never>
    }
    private var held: [HeldSync] = []
    /// Stores retired and kept for their late replies.
    private var retired: [LocalStore] = []

    /// Whether a held request is waiting.
    public var isHolding: Bool { !held.isEmpty }

    /// Whether the device is down (crashed, not restarted).
    public var isDown: Bool { store == nil }

    /// Creates the device and opens its empty journal.
    public init(name: String, user: String, server: ReferenceServer, clock: ManualClock, kinds: [String],
                checkpointThreshold: Int = 64, jitterSeed: UInt64 = 1, log: ServerLog? = nil) async throws(DeviceError) {
        self.name = name
        self.user = user
        makeTransport = { server.transport(user: user) }
        appliedMutations = { await server.appliedMutations }
        self.clock = clock
        self.kinds = kinds
        self.log = log
        sequence = nil
        self.checkpointThreshold = checkpointThreshold
        self.jitterSeed = jitterSeed
        disk = SimulatedDisk()
        disk.createDirectory("/device")
        path = "/device/\(name).journal"
        try await open()
    }

    init(name: String, user: String, server: any SimulationServer, clock: ManualClock, kinds: [String], checkpointThreshold: Int,
         jitterSeed: UInt64, log: ServerLog, sequence: EventCounter, batchSize: Int, pullLimit: Int,
         policies: [String: ConflictPolicy], followsSharedSpaces: Bool = false) async throws(DeviceError) {
        self.name = name
        self.user = user
        self.followsSharedSpaces = followsSharedSpaces
        makeTransport = { server.transport(device: name, user: user) }
        appliedMutations = { await server.appliedMutations() }
        self.clock = clock
        self.kinds = kinds
        self.log = log
        self.sequence = sequence
        self.checkpointThreshold = checkpointThreshold
        self.jitterSeed = jitterSeed
        self.batchSize = batchSize
        self.pullLimit = pullLimit
        self.policies = policies
        disk = SimulatedDisk()
        disk.createDirectory("/device")
        path = "/device/\(name).journal"
        try await open()
    }

    /// The store, or an error naming why there is none usable.
    public func liveStore() throws(DeviceError) -> LocalStore {
        guard let store else { throw DeviceError(description: "\(name) is down (crashed); `\(name) restart` first") }
        return store
    }

    /// Opens the journal: a new store, engine and transport.
    func open() async throws(DeviceError) {
        // Preallocation in 4 KiB steps: crashes land in extensions often,
        // and each crash copies little of the simulated disk.
        // The device's threshold is a record count: automatic checkpoints
        // past that many records (or the live items), whatever their bytes.
        let upkeep: LocalStore.UpkeepPolicy = checkpointThreshold > 0 ? .records(beyond: checkpointThreshold) : .off
        var options = LocalStore.Options(system: disk, clock: clock, upkeep: upkeep,
                                         conflictPolicies: policies, preallocationBytes: 4096)
        // Files only in runs that attach them: a small cache and a short
        // grace, so upkeep evicts and removes within a run.
        options.attachmentCacheBytes = SimulationContents.cacheBytes
        options.attachmentGrace = .seconds(SimulationContents.graceSeconds)
        let opened: LocalStore
        do { opened = try await LocalStore.open(path: path, options: options) } catch {
            throw DeviceError(description: "\(name) could not open its journal: \(error)")
        }
        let base: any SyncTransport
        if let log {
            let counter = sequence
            base = LoggingTransport(base: makeTransport(), appliedMutations: appliedMutations, log: log, device: name,
                                    sequence: { counter?.next() ?? 0 })
        } else {
            base = makeTransport()
        }
        let faulty = FaultInjectingTransport(base)
        await faulty.setOffline(offline)
        store = opened
        transport = faulty
        await engine?.stop()
        await makeEngine()
    }

    /// A new engine on the current store and transport, started when the scenario asked for live sync.
    private func makeEngine() async {
        guard let store, let transport else { return }
        var options = SyncEngine.Options(kinds: kinds, batchSize: batchSize, pullLimit: pullLimit, jitterSeed: jitterSeed)
        options.followsSharedSpaces = followsSharedSpaces
        options.attachmentChunkBytes = SimulationContents.chunkBytes
        options.idlePullInterval = live?.idlePullMilliseconds.map { .milliseconds($0) }
        options.changeWaitTimeout = live?.changeWaits == true ? Self.changeWaitTimeout : nil
        let engine = SyncEngine(store: store, transport: transport, options: options, clock: clock)
        self.engine = engine
        changeWaitsSeen = 0
        if live != nil { await engine.start(online: !offline) }
    }

    /// Starts the engine's own scheduling (`A start [idle MS] [waits]`):
    /// syncs after edits, idle pulls every `idlePullMilliseconds`, and with
    /// `changeWaits` a wait for server changes kept open. Kept across restarts.
    public func startLive(idlePullMilliseconds: Int64?, changeWaits: Bool) async throws(DeviceError) {
        _ = try liveStore()
        live = LiveSettings(idlePullMilliseconds: idlePullMilliseconds, changeWaits: changeWaits)
        await engine?.stop()
        await makeEngine()
    }

    /// Whether the engine keeps a wait for server changes open (`A start waits`).
    public var waitsForChanges: Bool { live?.changeWaits ?? false }

    /// Stops the engine's own scheduling (`A stop`); syncs run only when told again.
    public func stopLive() async {
        live = nil
        await engine?.stop()
    }

    /// The app came to the foreground (`A active`): a pull at once when one can run.
    public func becomeActive() async throws(DeviceError) {
        _ = try liveStore()
        guard let engine else { throw DeviceError(description: "\(name) has no engine") }
        if let outcome = await engine.appDidBecomeActive() { lastOutcome = outcome }
    }

    /// Returns once the device's wait for changes has ended and the pull it
    /// brought has finished (`A notified`). Fails at once when no wait is
    /// open and none ended since the last `notified`.
    public func awaitNotification() async throws(DeviceError) {
        _ = try liveStore()
        guard let engine, live?.changeWaits == true else {
            throw DeviceError(description: "\(name) does not wait for changes; `\(name) start waits` first")
        }
        let ended = await engine.changeWaitsEnded
        if ended <= changeWaitsSeen, await !engine.hasChangeWaitUnderway {
            throw DeviceError(description: "\(name) has no wait for changes open")
        }
        await engine.untilChangeWaitsEnded(changeWaitsSeen + 1)
        changeWaitsSeen = await engine.changeWaitsEnded
    }

    /// Requests the device's transport has seen (pushes, pulls and reads; waits not counted).
    public func requestCount() async -> Int {
        await transport?.requestCount ?? 0
    }

    /// Reports the device online or offline (kept across restarts).
    public func setOnline(_ online: Bool) async {
        offline = !online
        await transport?.setOffline(offline)
        if live != nil { await engine?.setOnline(online) }
    }

    /// Sets the push batch size (kept across restarts).
    public func setBatchSize(_ size: Int) async {
        batchSize = max(1, size)
        await engine?.setBatchSize(batchSize)
    }

    /// Sets the pull page size (kept across restarts).
    public func setPullLimit(_ limit: Int) async {
        pullLimit = max(1, limit)
        await engine?.setPullLimit(pullLimit)
    }

    /// Sets the conflict policy of `kind` (kept across restarts).
    public func setPolicy(_ policy: ConflictPolicy, for kind: String) async {
        policies[kind] = policy
        await store?.setConflictPolicy(policy, for: kind)
    }

    /// Runs one sync with `disturbance`. With ``SyncDisturbance/hold`` it
    /// returns once the first request is held (`nil`), or the sync's outcome
    /// if it ended without a request (offline).
    @discardableResult
    public func sync(_ disturbance: SyncDisturbance = .none) async throws(DeviceError) -> SyncOutcome? {
        _ = try liveStore()
        guard let engine, let transport else { throw DeviceError(description: "\(name) has no engine") }
        switch disturbance {
        case .none: break
        case .loseReply: await transport.inject(.loseReply, on: .push)
        case .loseRequest: await transport.inject(.loseRequest, on: .any)
        case .duplicate: await transport.inject(.duplicate, on: .push)
        case .hold: return await startHeld(engine: engine, transport: transport)
        }
        let outcome = await engine.sync()
        if disturbance != .none { await transport.clearFaults() }
        lastOutcome = outcome
        return outcome
    }

    /// Runs one sync with an arbitrary transport fault on its first matching request.
    func sync(injecting fault: FaultInjectingTransport.Fault, on kind: FaultInjectingTransport.RequestKind) async throws(DeviceError) -> SyncOutcome {
        _ = try liveStore()
        guard let engine, let transport else { throw DeviceError(description: "\(name) has no engine") }
        await transport.inject(fault, on: kind)
        let outcome = await engine.sync()
        await transport.clearFaults()
        lastOutcome = outcome
        return outcome
    }

    /// Starts a sync whose next request of `kind` is held; returns `nil` once
    /// held, or the outcome if the sync ended without such a request.
    func startHeld(engine: SyncEngine, transport: FaultInjectingTransport,
                   kind: FaultInjectingTransport.RequestKind = .any) async -> SyncOutcome? {
        await transport.holdNextRequest(kind)
        let done = Mutex<SyncOutcome?>(nil)
        let task = Task {
            let outcome = await engine.sync()
            done.withLock { $0 = outcome }
            return outcome
        }
        while true {
            if await transport.isHolding { break }
            if done.withLock({ $0 }) != nil {
                await transport.clearFaults()
                let outcome = await task.value
                lastOutcome = outcome
                return outcome
            }
            await Task.yield()
        }
        held.append(HeldSync(transport: transport, task: task))
        return nil
    }

    /// Runs one sync whose attachment calls meet `fault` once `afterCalls` of them have passed.
    func sync(attachmentFault fault: FaultInjectingTransport.Fault, afterCalls: Int) async throws(DeviceError) -> SyncOutcome {
        _ = try liveStore()
        guard let engine, let transport else { throw DeviceError(description: "\(name) has no engine") }
        await transport.inject(.pass, on: .attachment, times: afterCalls)
        await transport.inject(fault, on: .attachment)
        let outcome = await engine.sync()
        await transport.clearFaults()
        lastOutcome = outcome
        return outcome
    }

    /// Starts a sync whose attachment call after `afterCalls` passed is held
    /// (an upload cut where it stands); `nil` once held, or the outcome if
    /// the sync ended first.
    func syncHoldingUpload(afterCalls: Int) async throws(DeviceError) -> SyncOutcome? {
        _ = try liveStore()
        guard let engine, let transport else { throw DeviceError(description: "\(name) has no engine") }
        await transport.inject(.pass, on: .attachment, times: afterCalls)
        return await startHeld(engine: engine, transport: transport, kind: .attachment)
    }

    /// The user opens `attachment`: its file here, or fetched through the
    /// engine, with `fault` on the attachment call after `afterCalls` when given.
    func open(_ attachment: Attachment, fault: FaultInjectingTransport.Fault?,
              afterCalls: Int) async throws(DeviceError) -> Result<String, AttachmentDownloadError> {
        _ = try liveStore()
        guard let engine, let transport else { throw DeviceError(description: "\(name) has no engine") }
        if let fault {
            await transport.inject(.pass, on: .attachment, times: afterCalls)
            await transport.inject(fault, on: .attachment)
        }
        let result: Result<String, AttachmentDownloadError>
        do throws(AttachmentDownloadError) { result = .success(try await engine.download(attachment)) } catch { result = .failure(error) }
        if fault != nil { await transport.clearFaults() }
        return result
    }

    /// Starts a sync holding its next push (for the simulator's in-flight races).
    func syncHoldingPush() async throws(DeviceError) -> SyncOutcome? {
        _ = try liveStore()
        guard let engine, let transport else { throw DeviceError(description: "\(name) has no engine") }
        return await startHeld(engine: engine, transport: transport, kind: .push)
    }

    /// Lets the oldest held request reach the server and waits for its sync
    /// to end. With `deliverReply` false the reply is lost.
    @discardableResult
    public func release(deliverReply: Bool = true) async throws(DeviceError) -> SyncOutcome {
        guard !held.isEmpty else { throw DeviceError(description: "\(name) has no held request to release") }
        let first = held.removeFirst()
        await first.transport.releaseHeld(deliverReply: deliverReply)
        let outcome = await first.task.value
        lastOutcome = outcome
        return outcome
    }

    /// The device dies: the disk freezes, every held request reaches the
    /// server with its reply lost, the store is dropped, and the disk
    /// crashes (`mode`: what unsynced data survives).
    public func crash(_ mode: SimulatedDisk.CrashMode = .loseUnsynced) async {
        // The moment of death: from here no call reaches the disk. The old
        // store and its engine are run down against the frozen disk (a late
        // reply, a pending write or checkpoint fails), so nothing of theirs
        // can touch the new boot's files; then the power goes.
        disk.freeze(afterCalls: 0)
        await engine?.stop()
        for entry in held {
            await entry.transport.releaseHeld(deliverReply: false)
            _ = await entry.task.value
        }
        held = []
        for old in retired + [store].compactMap({ $0 }) {
            try? await old.close()
            await old.retire()
        }
        disk.crash(mode)
        retired = []
        store = nil
        engine = nil
        transport = nil
    }

    /// Reopens the journal: after a crash, the store replays it; a running
    /// device is closed cleanly first (held requests lose their replies).
    public func restart() async throws(DeviceError) {
        if let store {
            for entry in held {
                await entry.transport.releaseHeld(deliverReply: false)
                _ = await entry.task.value
            }
            held = []
            do { try await store.close() } catch {
                // A failed store cannot flush; it is retired instead (the journal keeps what was durable).
                await store.retire()
            }
            for old in retired { await old.retire() }
            retired = []
            self.store = nil
        }
        try await open()
    }

    /// Retires the store (the app switched endpoint); held requests stay held.
    public func retire() async throws(DeviceError) {
        let store = try liveStore()
        await store.retire()
    }

    /// Opens a new store on the same journal (the app switched back); the
    /// retired store and its held requests are kept for their late replies.
    public func reopen() async throws(DeviceError) {
        let current = try liveStore()
        guard await current.status == .retired else { throw DeviceError(description: "\(name)'s store is not retired; `\(name) retire` first") }
        retired.append(current)
        try await open()
    }

    /// `ok`, `unreadable`, `retired`, `failed`, `closed`, or `down`.
    public func statusName() async -> String {
        guard let store else { return "down" }
        switch await store.status {
        case .ready: return "ok"
        case .unreadable: return "unreadable"
        case .retired: return "retired"
        case .failed: return "failed"
        case .closed: return "closed"
        case .suspended: return "suspended"
        }
    }
}
