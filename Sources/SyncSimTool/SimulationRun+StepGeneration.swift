import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// The step generator: the seeded random choice of the next step, weighted
/// by action and limited to the configured fault classes.
extension SimulationRun {
    func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }
    func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &generator)] }
    func enabled(_ fault: SimulationFault) -> Bool { configuration.faults.contains(fault) }

    /// Fields for an edit of `kind`; a note edited on a version-2 device (`modelVersion`) may be pinned.
    func randomFields(kind: String, all: Bool, modelVersion: Int = 1) -> [String: FieldValue] {
        var fields: [String: FieldValue] = [:]
        if kind == "pin" {
            if all || chance(60) { fields["name"] = .string(pick(["Cafe", "Museum", "Tapas", "Park", "Bakery"])) }
            if all || chance(50) { fields["rating"] = .int(Int64.random(in: 1...5, using: &generator)) }
            if all || chance(40) { fields["tags"] = .stringSet(Set(["food", "art", "walk"].filter { _ in chance(50) })) }
        } else {
            if all || chance(70) { fields["text"] = .string(pick(["buy milk", "call mum", "tapas at 8", "pack boots"])) }
            if all || chance(40) { fields["done"] = .bool(chance(50)) }
            if modelVersion >= 2, all || chance(30) { fields["pinned"] = .bool(chance(50)) }
        }
        if fields.isEmpty { fields = kind == "pin" ? ["rating": .int(3)] : ["done": .bool(true)] }
        return fields
    }

    /// An edit on `device`. With more than one user, u1 edits notes and pins
    /// of its own and pins of the shared list; the others edit the shared
    /// list only (so a personal record is always u1's, and the server's log
    /// names each record once).
    func randomEdit(device: Int) async -> SimulationEdit {
        let state = try? await devices[device].store?.currentState()
        let owner = devices[device].user == "u1"
        let sharing = configuration.users > 1
        let kind = sharing && !owner ? "pin" : pick(Simulation.kinds)
        let space = sharing && kind == "pin" && (!owner || chance(50)) ? Simulation.sharedList : .personal
        var id = pick(Simulation.pool[kind]!)
        if let state, chance(50) {
            let visible = Simulation.pool[kind]!.filter { state.visibleFields(of: RecordKey(kind: kind, id: $0, space: space)) != nil }
            if !visible.isEmpty { id = pick(visible) }
        }
        let visible = state?.visibleFields(of: RecordKey(kind: kind, id: id, space: space)) != nil
        let version = Simulation.modelVersion(ofDevice: device)
        if !visible {
            var fields = randomFields(kind: kind, all: true, modelVersion: version)
            // Drawn only with attachments on, so runs without them repeat as before.
            if enabled(.attachments), kind == "pin", chance(50) { fields["photo"] = .attachment(randomFile().attachment) }
            return .create(kind: kind, id: id, fields: fields, space: space)
        }
        guard chance(60) else { return .delete(kind: kind, id: id, space: space) }
        var fields = randomFields(kind: kind, all: false, modelVersion: version)
        if enabled(.attachments), kind == "pin", chance(40) {
            // Attach or replace the photo, or clear it.
            fields["photo"] = chance(75) ? .attachment(randomFile().attachment) : .null
        }
        return .update(kind: kind, id: id, fields: fields, space: space)
    }

    /// A file of the pool: the empty one now and then, the others alike.
    func randomFile() -> SimulationContents.File {
        chance(8) ? SimulationContents.files[0] : pick(Array(SimulationContents.files.dropFirst()))
    }

    /// A change of another user's membership of the shared list, from where it stands on the server now.
    func randomMembershipChange() async -> MembershipChange? {
        let user = "u\(Int.random(in: 2...configuration.users, using: &generator))"
        guard let spaces = try? await server.spaces(user: user) else { return nil }
        switch spaces.first(where: { $0.id == Simulation.sharedList })?.role {
        case nil: return .set(user: user, role: chance(70) ? .editor : .viewer)
        case .viewer?: return pick([.set(user: user, role: .editor), .remove(user: user), .leave(user: user)])
        default: return pick([.set(user: user, role: .viewer), .remove(user: user), .leave(user: user)])
        }
    }

    func generate() async -> SimulationStep {
        let device = Int.random(in: 0..<devices.count, using: &generator)
        let advance = chance(70) ? Int64.random(in: 0...3_000, using: &generator) : 0
        let tick: Int64 = chance(50) ? Int64.random(in: 1...3, using: &generator) : 0
        // Drawn only when the list is shared, so one-user runs repeat as before.
        if configuration.users > 1, enabled(.membership), chance(6), let change = await randomMembershipChange() {
            return SimulationStep(action: .membership(change), advance: advance, tick: tick)
        }
        // Drawn only with attachments on, so runs without them repeat as before.
        if enabled(.attachments), chance(18), let action = await randomAttachmentAction(device: device) {
            return SimulationStep(action: action, advance: advance, tick: tick)
        }
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
        case 87..<89 where enabled(.serverRestore) && server.canRestore:
            action = chance(55) ? .serverBackup : .serverRestore
        case 80..<83 where enabled(.crashMidWrite):
            let edit = await randomEdit(device: device)
            action = .crashMidWrite(device: device, afterCalls: Int.random(in: 0..<6, using: &generator), edit: edit, powerSeed: generator.next())
        default:
            break
        }
        if action == nil { action = .edit(device: device, await randomEdit(device: device)) }
        return SimulationStep(action: action!, advance: advance, tick: tick)
    }
}
