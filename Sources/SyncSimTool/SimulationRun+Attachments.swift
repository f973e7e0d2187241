import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// Attachments as operations: which attachment step comes next, the files
/// an edit attaches, opening files, syncs whose uploads meet a fault or a
/// crash, and the device's attachment upkeep.
extension SimulationRun {
    // MARK: Choosing

    /// An attachment step on `device`, or `nil` when the one drawn does not
    /// apply now (no record with a file to open, no upload owed).
    func randomAttachmentAction(device: Int) async -> SimulationAction? {
        guard let store = devices[device].store, let state = try? await store.currentState() else { return nil }
        let roll = Int.random(in: 0..<100, using: &generator)
        switch roll {
        case 0..<35:
            let keys = Self.keysWithFiles(in: state)
            guard !keys.isEmpty else { return nil }
            let key = pick(keys)
            var faults: [SyncFault] = []
            if enabled(.loseRequest) { faults.append(.loseRequest) }
            if enabled(.transient) { faults.append(.transient) }
            if enabled(.offline) { faults.append(.offline) }
            guard !faults.isEmpty, chance(35) else { return .openAttachment(device: device, key: key, fault: .none, afterCalls: 0) }
            return .openAttachment(device: device, key: key, fault: pick(faults), afterCalls: Int.random(in: 0..<4, using: &generator))
        case 35..<80:
            // Only while an upload is owed: else the fault would meet no attachment call.
            guard await uploadOwed(store: store, state: state) else { return nil }
            let calls = Int.random(in: 0..<8, using: &generator)
            // Dying mid-upload belongs to the crash classes, and each fault to its own class: drawn only when on.
            if roll >= 58, enabled(.crash) || enabled(.crashMidRequest) {
                return .crashMidUpload(device: device, afterCalls: calls, powerSeed: chance(50) ? generator.next() : nil)
            }
            var faults: [SyncFault] = []
            if enabled(.loseRequest) { faults.append(.loseRequest) }
            if enabled(.loseReply) { faults.append(.loseReply) }
            if enabled(.duplicate) { faults.append(.duplicate) }
            if enabled(.transient) { faults.append(.transient) }
            if enabled(.permanent) { faults.append(.permanent) }
            if enabled(.offline) { faults.append(.offline) }
            guard !faults.isEmpty else { return nil }
            return .uploadFault(device: device, afterCalls: calls, fault: pick(faults))
        case 80..<88 where server.collectsAttachments:
            return .serverCollectAttachments
        default:
            return .collectAttachments(device: device)
        }
    }

    /// The records `state` shows whose fields hold a file, in key order.
    static func keysWithFiles(in state: StoreState) -> [RecordKey] {
        let keys = Set(state.snapshot.keys.map { $0 } + Array(state.outbox.keys))
        return keys.filter { key in state.visibleFields(of: key)?.values.contains { !$0.attachments.isEmpty } ?? false }.sorted(by: <)
    }

    /// Whether a queued edit refers to a file the server has not confirmed.
    func uploadOwed(store: LocalStore, state: StoreState) async -> Bool {
        let files = await store.attachmentStore
        for entry in state.outbox.operations where entry.operation.kind != .delete {
            for value in entry.operation.fields.values {
                for attachment in value.attachments where attachment.content != .empty {
                    if (try? await files.place(of: attachment.content)) == .pending { return true }
                }
            }
        }
        return false
    }

    /// The injected transport fault a step names.
    func transportFault(_ fault: SyncFault) -> FaultInjectingTransport.Fault? {
        switch fault {
        case .none: return nil
        case .loseRequest: return .loseRequest
        case .loseReply: return .loseReply
        case .duplicate: return .duplicate
        case .transient: return .transient(reason: "503 (simulated)", retryAfter: .milliseconds(1_000))
        case .permanent: return .permanent(reason: "401 (simulated)")
        case .offline: return .offline
        }
    }

    // MARK: Performing

    /// Performs an attachment step; `false` when `action` is not one.
    func performAttachmentStep(_ action: SimulationAction) async -> Bool {
        switch action {
        case .openAttachment(let device, let key, let fault, let calls):
            await openFiles(device: device, key: key, fault: fault, afterCalls: calls)
        case .uploadFault(let device, let calls, let fault):
            statistics.syncs += 1
            do { _ = try await devices[device].sync(attachmentFault: transportFault(fault) ?? .pass, afterCalls: calls) } catch {
                fail(.replayEqualsState, "\(name(device)) could not sync: \(error)")
                return true
            }
            await syncEnded(device: device)
        case .crashMidUpload(let device, let calls, let powerSeed):
            await crashMidUpload(device: device, afterCalls: calls, powerSeed: powerSeed)
        case .collectAttachments(let device):
            guard let store = devices[device].store else { return true }
            do { _ = try await store.collectAttachments() } catch {
                fail(.replayEqualsState, "\(name(device))'s attachment upkeep failed on a healthy disk: \(error)")
            }
        case .serverCollectAttachments:
            _ = await server.collectAttachments()
        default:
            return false
        }
        return true
    }

    /// The files an edit sets are attached first, as an app adds a file
    /// before it refers to it; each must come back named as the pool names it.
    func attachFiles(of edit: SimulationEdit, device: Int, store: LocalStore) async throws(StoreError) {
        for attachment in edit.attachments {
            guard let bytes = SimulationContents.bytes(of: attachment.content) else { continue }
            let made = try await store.attach(bytes, mediaType: attachment.mediaType)
            if made != attachment { fail(.attachmentKeptUntilUploaded, "\(name(device)) attached \(attachment) and was handed \(made)") }
        }
    }

    /// A sync held at an attachment call, then the device dies there.
    func crashMidUpload(device: Int, afterCalls: Int, powerSeed: UInt64?) async {
        let simulated = devices[device]
        statistics.syncs += 1
        let ended: SyncOutcome?
        do { ended = try await simulated.syncHoldingUpload(afterCalls: afterCalls) } catch {
            fail(.replayEqualsState, "\(name(device)) could not sync: \(error)")
            return
        }
        // The sync ended before that many attachment calls: a sync like any other.
        guard ended == nil else {
            await syncEnded(device: device)
            return
        }
        let before = await state(of: device)
        await simulated.crash(powerSeed.map { .random(seed: $0) } ?? .processCrash)
        statistics.crashesMidUpload += 1
        await restartAndCompare(device: device, expected: before,
                                what: powerSeed == nil ? "a kill while an upload was held" : "a power cut while an upload was held")
    }

    /// The user opens every file of `key` on `device`: one here is read;
    /// one that is not is downloaded, which must succeed (with the right
    /// bytes) whenever the device is online and the server holds the
    /// content for its user. The first download meets `fault` after
    /// `afterCalls` calls, and is tried once more, as a user would.
    func openFiles(device: Int, key: RecordKey, fault: SyncFault, afterCalls: Int) async {
        let simulated = devices[device]
        guard let store = simulated.store, let fields = (try? await store.currentState())?.visibleFields(of: key) else { return }
        var injected = transportFault(fault)
        for field in fields.keys.sorted() {
            for attachment in fields[field]!.attachments {
                statistics.invariantChecks += 1
                let what = "the \(field) of \(key.kind) \(key.id)\(key.space.isPersonal ? "" : " in the shared list")"
                if let path = (try? await store.attachmentFile(attachment)) ?? nil {
                    checkOpened(device: device, path: path, attachment: attachment, what: what)
                    continue
                }
                var result: Swift.Result<String, AttachmentDownloadError>?
                if let first = injected {
                    injected = nil
                    result = try? await simulated.open(attachment, fault: first, afterCalls: afterCalls)
                    if case .failure? = result { result = nil }
                }
                if result == nil { result = try? await simulated.open(attachment, fault: nil, afterCalls: 0) }
                switch result {
                case .success(let path)?:
                    if attachment.content != .empty { statistics.attachmentsDownloaded += 1 }
                    checkOpened(device: device, path: path, attachment: attachment, what: what)
                case .failure(let error)?:
                    guard !simulated.offline else { continue }
                    let readable: Bool
                    do throws(TransportError) { readable = try await server.holds(attachment, user: simulated.user) } catch {
                        fail(.server, "asking the server for \(attachment) failed: \(error)")
                        return
                    }
                    if readable {
                        fail(.attachmentAvailable, "\(name(device)) could not open \(what), \(attachment), although it is online "
                            + "and the server holds it for \(simulated.user): \(error)")
                        return
                    }
                case nil:
                    return
                }
            }
        }
    }

    /// An opened file must hold the content its name says.
    func checkOpened(device: Int, path: String, attachment: Attachment, what: String) {
        guard let bytes = devices[device].disk.contents(of: path), SHA256.digest(bytes) == attachment.content.bytes else {
            fail(.attachmentAvailable, "\(name(device)) opened \(what) at \(path), which does not hold \(attachment)")
            return
        }
    }

    /// The names of the files `device` holds on its disk now, pending or cached.
    func heldFiles(device: Int) -> Set<String> {
        let simulated = devices[device]
        let directory = simulated.path + ".attachments"
        return Set(simulated.disk.files(in: directory + "/pending") + simulated.disk.files(in: directory + "/cached"))
    }
}
