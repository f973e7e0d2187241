import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import SyncJournalCommandLine

/// The demo's state: the server, two devices, and the checks so far.
/// The steps run one after another; the class is never shared between tasks.
final class SyncDemo: @unchecked Sendable {
    let directory: String
    let output: ToolOutput
    let server: any DemoServer
    /// The kinds for pins and notes (`pin`, `note`; with a run suffix on a shared server).
    let pin: String
    let note: String
    var failures = 0
    var checks = 0

    struct Device {
        var name: String
        var path: String
        var store: LocalStore
        var transport: FaultInjectingTransport
        var engine: SyncEngine
    }

    init(directory: String, server: any DemoServer, output: ToolOutput) {
        self.directory = directory
        self.server = server
        self.output = output
        (pin, note) = server.kinds
    }

    func say(_ text: String) { output.standard(text + "\n") }

    func check(_ condition: Bool, _ what: String) {
        checks += 1
        if condition {
            say("   ✓ \(what)")
        } else {
            failures += 1
            say("   ✗ \(what)")
        }
    }

    func open(_ name: String) async throws -> Device {
        let path = "\(directory)/device-\(name).journal"
        let store = try await LocalStore.open(path: path)
        let transport = FaultInjectingTransport(server.transport(device: name))
        let engine = SyncEngine(store: store, transport: transport, options: .init(kinds: [pin, note]))
        return Device(name: name, path: path, store: store, transport: transport, engine: engine)
    }

    func reopen(_ device: Device) async throws -> Device {
        let store = try await LocalStore.open(path: device.path)
        let engine = SyncEngine(store: store, transport: device.transport, options: .init(kinds: [pin, note]))
        return Device(name: device.name, path: device.path, store: store, transport: device.transport, engine: engine)
    }

    func names(_ device: Device, _ kind: String? = nil) async throws -> [String] {
        try await device.store.records(kind ?? pin).map { record in
            if case .string(let name)? = record.fields["name"] { return name }
            return record.id
        }
    }

    func serverNames(_ kind: String? = nil) async throws -> [String] {
        try await server.liveRows(kind: kind ?? pin).map { row in
            if case .string(let name)? = row.fields["name"] { return name }
            return row.id
        }
    }

    func sync(_ device: Device) async -> SyncOutcome {
        let outcome = await device.engine.sync()
        say("   \(device.name) sync: \(outcome)")
        return outcome
    }

    /// Stages a conflict on `kind/id`: A's change reaches the server first,
    /// B's change (made offline on the same base) meets it. Returns B's conflicts.
    func conflict(_ a: Device, _ b: Device, _ kind: String, _ id: String,
                  a aChanges: [String: FieldValue], b bChanges: [String: FieldValue]) async throws -> [ConflictRecord] {
        _ = await sync(a)
        _ = await sync(b)
        await b.transport.setOffline(true)
        try await b.store.update(kind, id: id, changes: bChanges)
        try await a.store.update(kind, id: id, changes: aChanges)
        _ = await sync(a)
        await b.transport.setOffline(false)
        _ = await sync(b)
        return try await b.store.conflicts()
    }

    /// Steps 6 to 8: one conflict resolved by each of the other policies.
    func policies(_ a: Device, _ b: Device) async throws {
        say("\n6. Client wins: B's policy for notes reapplies B's change on the server's copy.")
        await b.store.setConflictPolicy(.clientWins, for: note)
        var conflicts = try await conflict(a, b, note, "n1", a: ["text": .string("Map is in the car")], b: ["text": .string("Map is in my bag")])
        check(conflicts.count == 1 && conflicts[0].resolution.strategy == .clientWins && conflicts[0].resolution.replacement != nil,
              "the conflict is surfaced, and a new operation based on the server's stamp took B's place in the queue")
        check(try await server.liveRow(kind: note, id: "n1")?.fields["text"] == .string("Map is in my bag"),
              "the same sync pushed it: the server holds B's text")
        try await b.store.dismissConflict(conflicts[0].id)

        say("\n7. Merge fields: B's policy for pins merges what does not overlap; sets take the union.")
        await b.store.setConflictPolicy(.mergeFields, for: pin)
        conflicts = try await conflict(a, b, pin, "tapas",
                                       a: ["name": .string("Tapas Bar Sol (closed Mondays)"), "tags": .stringSet(["spanish"])],
                                       b: ["name": .string("Tapas Sol"), "tags": .stringSet(["late-night"]), "rating": .int(5)])
        let merged = try await server.liveRow(kind: pin, id: "tapas")?.fields
        check(conflicts.count == 1 && conflicts[0].resolution.lostFields == ["name"],
              "B is told which field lost: \"name\" (both changed it; the server's value stays)")
        check(merged?["tags"] == .stringSet(["spanish", "late-night"]) && merged?["rating"] == .int(5)
              && merged?["name"] == .string("Tapas Bar Sol (closed Mondays)"),
              "the server holds the union of the tags, B's rating and A's name")
        try await b.store.dismissConflict(conflicts[0].id)

        say("\n8. Custom: the app's resolver joins both notes' texts.")
        await b.store.setConflictPolicy(.custom { conflict in
            guard case .string(let theirs)? = conflict.server?.fields["text"], case .string(let mine)? = conflict.local?["text"] else {
                return .acceptServer
            }
            return .keep(["text": .string(theirs + " / " + mine)])
        }, for: note)
        conflicts = try await conflict(a, b, note, "n2", a: ["text": .string("Tram 18")], b: ["text": .string("Bus 52")])
        check(conflicts.count == 1 && conflicts[0].resolution.strategy == .custom, "the resolver got base, local and server copies and decided")
        check(try await server.liveRow(kind: note, id: "n2")?.fields["text"] == .string("Tram 18 / Bus 52"), "the server holds the joined text")
        try await b.store.dismissConflict(conflicts[0].id)
    }

    func run() async throws {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var a = try await open("A")
        var b = try await open("B")
        say("SyncJournal demo: \(server.headline).")
        if pin != "pin" { say("This run's kinds on the server: \(pin) and \(note) (new ones each run, so the demo can run again).") }
        say("Journals: \(directory)/device-A.journal, \(directory)/device-B.journal\n")

        say("1. Two devices edit while offline.")
        await a.transport.setOffline(true)
        await b.transport.setOffline(true)
        try await a.store.create(pin, id: "cafe", fields: ["name": .string("Café Kranz"), "tags": .stringSet(["coffee"])])
        try await a.store.create(pin, id: "museum", fields: ["name": .string("Deutsches Museum")])
        try await b.store.create(note, id: "n1", fields: ["text": .string("Bring the walking map")])
        check(await sync(a) == .skipped(.offline), "offline is a skipped sync, not an error")
        check(try await a.store.outboxOperations().count == 2, "A's two edits wait in its journaled outbox")
        await a.transport.setOffline(false)
        await b.transport.setOffline(false)
        _ = await sync(a)
        _ = await sync(b)
        _ = await sync(a)
        check(try await names(b).sorted() == ["Café Kranz", "Deutsches Museum"], "B sees A's pins")
        check(try await a.store.records(note).count == 1, "A sees B's note")

        say("\n2. The clear-all race: A clears the pins offline while a chat adds a new one on the server.")
        await a.transport.setOffline(true)
        for record in try await a.store.records(pin) { try await a.store.delete(pin, id: record.id) }
        try await server.writeAsAnotherWriter(kind: pin, id: "tapas", fields: ["name": .string("Tapas Bar Sol")])
        say("   the chat pinned \"Tapas Bar Sol\" on the server; A's outbox holds two per-id deletes")
        await a.transport.setOffline(false)
        _ = await sync(a)
        check(try await serverNames() == ["Tapas Bar Sol"], "the server keeps the new pin: A sent deletes of ids it saw, not its whole list")
        check(try await names(a) == ["Tapas Bar Sol"], "A shows the new pin")

        say("\n3. The in-flight create race: a create is deleted while its request is in flight.")
        try await a.store.create(pin, id: "bakery", fields: ["name": .string("Bakery")])
        await a.transport.holdNextRequest(.push)
        let engineA = a.engine
        let held = Task { await engineA.sync() }
        await a.transport.waitUntilHeld()
        say("   A's push of the create is open; the user deletes the pin meanwhile")
        try await a.store.delete(pin, id: "bakery")
        check(try await a.store.outboxOperations().map(\.operation.kind) == [.create, .delete],
              "the delete is queued behind the in-flight create, not cancelled against it")
        await a.transport.releaseHeld()
        say("   A sync: \(await held.value)")
        _ = await sync(a)
        check(try await server.liveRow(kind: pin, id: "bakery") == nil, "the server has no bakery: no resurrection")
        _ = await sync(b)
        check(try await b.store.record(pin, id: "bakery") == nil, "B never shows it either")

        say("\n4. A reply is lost after the server applied the push.")
        try await b.store.create(note, id: "n2", fields: ["text": .string("Tram 18 from Sendlinger Tor")])
        await b.transport.inject(.loseReply, on: .push)
        let appliedBefore = await server.appliedMutations()
        _ = await sync(b)
        check(try await b.store.outboxOperations().first?.sent == true, "B keeps the create, marked as possibly applied")
        let firstStamp = try await server.liveRow(kind: note, id: "n2")?.updatedAt
        let resend = await sync(b)
        if let appliedBefore {
            check(await server.appliedMutations() == appliedBefore + 1, "the resend is answered from the server's memory of the operation id: applied once")
        } else {
            // Over HTTP the server's counters are not visible. A server without the
            // memory would answer the resent create of a live row with a conflict
            // and a second apply would take a new stamp: neither happened.
            var resendClean = false
            if case .ok(1, _, 0) = resend { resendClean = true }
            let stampAfterResend = try await server.liveRow(kind: note, id: "n2")?.updatedAt
            check(resendClean && firstStamp != nil && stampAfterResend == firstStamp,
                  "the resend is answered from the server's memory of the operation id: applied once (no conflict, the row keeps its first stamp)")
        }
        check(try await b.store.outboxOperations().isEmpty, "B's outbox is empty")

        say("\n5. A stale base is surfaced as a conflict, never silently overwritten.")
        _ = await sync(a)
        await b.transport.setOffline(true)
        try await b.store.update(note, id: "n1", changes: ["text": .string("Bring the map and water")])
        try await a.store.update(note, id: "n1", changes: ["text": .string("Bring the paper map")])
        _ = await sync(a)
        await b.transport.setOffline(false)
        let outcome = await sync(b)
        var oneConflict = false
        if case .ok(_, _, 1) = outcome { oneConflict = true }
        check(oneConflict, "B's push reports one conflict")
        let conflicts = try await b.store.conflicts()
        check(conflicts.count == 1 && conflicts[0].server?.fields["text"] == .string("Bring the paper map"),
              "the conflict holds B's edit, its base and the server's copy, for the app to show")
        check(conflicts.first?.resolution.strategy == .serverWins && conflicts.first?.resolution.lostFields == ["text"],
              "server wins (the default policy): B is told its \"text\" lost")
        check(try await b.store.record(note, id: "n1")?.fields["text"] == .string("Bring the paper map"), "B shows the server's copy")
        try await b.store.dismissConflict(conflicts[0].id)

        try await policies(a, b)

        say("\n9. A crashes in the middle of a sync and recovers from its journal.")
        try await a.store.create(pin, id: "park", fields: ["name": .string("Englischer Garten")])
        await a.transport.holdNextRequest(.push)
        let engineA2 = a.engine
        let crashed = Task { await engineA2.sync() }
        await a.transport.waitUntilHeld()
        await a.transport.releaseHeld(deliverReply: false)
        _ = await crashed.value
        say("   the server applied the push; A died before the reply arrived")
        let parkStamp = try await server.liveRow(kind: pin, id: "park")?.updatedAt
        try await a.store.close()
        a = try await reopen(a)
        let recovered = try await a.store.outboxOperations()
        check(recovered.count == 1 && recovered[0].sent, "after restart the journal still holds the create, marked sent (nothing is in flight)")
        _ = await sync(a)
        let parks = try await server.liveRows(kind: pin).filter { $0.id == "park" }
        check(parkStamp != nil && parks.count == 1 && parks[0].updatedAt == parkStamp, "the resend did not duplicate the row")

        say("\n10. Both devices converge.")
        for _ in 0..<2 {
            _ = await sync(a)
            _ = await sync(b)
        }
        for (kind, label) in [(pin, "pin"), (note, "note")] {
            let server = try await server.liveRows(kind: kind).map { $0.id }
            let onA = try await a.store.records(kind).map(\.id)
            let onB = try await b.store.records(kind).map(\.id)
            check(onA == server && onB == server, "A, B and the server hold the same \(label)s: \(server)")
        }
        let outboxA = try await a.store.outboxOperations()
        let outboxB = try await b.store.outboxOperations()
        check(outboxA.isEmpty && outboxB.isEmpty, "every outbox is empty")
        try await a.store.close()
        try await b.store.close()
        b = try await reopen(b)
        let reopenedPins = try await b.store.records(pin).map(\.id)
        check(reopenedPins == (try await server.liveRows(kind: pin).map(\.id)), "B reopened from its journal shows the same")
        try await b.store.close()

        say("")
        say(failures == 0 ? "All \(checks) checks held." : "\(failures) of \(checks) checks FAILED.")
        say("Inspect the journals: swift run journal-dump \(directory)/device-A.journal (add --state for the replayed state)")
    }
}
