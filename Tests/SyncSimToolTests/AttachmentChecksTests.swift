import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
@testable import SyncSimTool
import Testing

/// The simulator's two attachment checks can fail, and say which file and
/// which record: a device's file removed behind its back, a content the
/// server no longer holds, a record whose file nobody has, an opened file
/// with other bytes. A device that keeps what it must passes them.
@Suite("sync-sim: the attachment-available and attachment-kept-until-uploaded checks")
struct AttachmentChecksTests {
    /// A run with attachments on and `count` devices of u1, set up by hand.
    static func run(devices count: Int = 1) async throws -> SimulationRun {
        let run = SimulationRun(configuration: SimulationConfiguration(seed: 1, devices: count, steps: 0, faults: [.attachments]))
        for index in 0..<count {
            let device = try await SimulatedDevice(name: SimulationStep.deviceName(index), user: "u1", server: run.server, clock: run.clock,
                                                   kinds: Simulation.kinds, checkpointThreshold: 0, jitterSeed: 1, log: run.log,
                                                   sequence: run.counter, batchSize: 4, pullLimit: 5, policies: [:])
            run.devices.append(device)
            run.deletions.append([:])
            run.openIDs.append([])
        }
        // As a run with attachments has it: files nothing refers to are collected at once.
        await run.server.limitAttachments(maximumBytes: SimulationContents.serverMaximumBytes, graceMilliseconds: 0)
        return run
    }

    /// A file of the pool several upload chunks long.
    static let file = SimulationContents.files.first { $0.bytes.count == 70_000 }!.attachment

    /// Where `device` keeps `attachment` while the server has not confirmed it, or once it has.
    static func path(_ device: SimulatedDevice, _ attachment: SyncJournalProtocol.Attachment, pending: Bool) -> String {
        device.path + ".attachments/" + (pending ? "pending/" : "cached/") + attachment.content.hex
    }

    @Test("a file removed behind the device's back while the edit that refers to it is queued, and the server never had it, is an attachment-kept-until-uploaded violation")
    func removedPendingFileIsReported() async throws {
        let run = try await Self.run()
        let device = run.devices[0]
        #expect(await run.makeEdit(device: 0, .create(kind: "pin", id: "p1", fields: ["name": .string("Cafe"), "photo": .attachment(Self.file)])))
        await run.checkInvariants()
        #expect(run.violation == nil)
        #expect(device.disk.contents(of: Self.path(device, Self.file, pending: true))?.count == 70_000)

        try device.disk.unlink(Self.path(device, Self.file, pending: true))
        await run.checkInvariants()
        #expect(run.violation?.invariant == .attachmentKeptUntilUploaded)
        #expect(run.violation?.detail.contains("A no longer holds the file sha256:\(Self.file.content.hex)") == true)
        #expect(run.violation?.detail.contains("queued create of pin p1") == true)
    }

    @Test("once uploaded the device may let the file go while the edit is still queued; when the server then drops the content, it is an attachment-kept-until-uploaded violation")
    func serverDroppingTheContentIsReported() async throws {
        let run = try await Self.run()
        let device = run.devices[0]
        // The server fails the record, not the upload: the content arrives, the edit stays queued.
        await run.server.setRecordFault(kind: "pin", id: "p1", permanent: false, times: 5)
        #expect(await run.makeEdit(device: 0, .create(kind: "pin", id: "p1", fields: ["photo": .attachment(Self.file)])))
        try await device.sync()
        let store = try device.liveStore()
        #expect(try await store.outboxOperations().count == 1)
        #expect(try await store.attachmentStore.place(of: Self.file.content) == .cached)

        try device.disk.unlink(Self.path(device, Self.file, pending: false))
        await run.checkInvariants()
        #expect(run.violation == nil, "the server holds it for u1")

        await run.server.tick(1)
        #expect(await run.server.collectAttachments() == 1, "no row refers to it yet")
        await run.checkInvariants()
        #expect(run.violation?.invariant == .attachmentKeptUntilUploaded)
        #expect(run.violation?.detail.contains("the server does not hold it for u1") == true)
    }

    @Test("a record a device shows after a whole sync whose file is neither on the device nor on the server is an attachment-available violation")
    func recordWithoutAFileAnywhereIsReported() async throws {
        let run = try await Self.run()
        let device = run.devices[0]
        // Another writer names a content the server never received.
        _ = try await run.server.write(kind: "pin", id: "p2", fields: ["name": .string("Park"), "photo": .attachment(Self.file)])
        try await device.sync()
        await run.checkAttachmentsAvailable(device: 0)
        #expect(run.violation?.invariant == .attachmentAvailable)
        #expect(run.violation?.detail.contains("A shows pin p2 with photo sha256:\(Self.file.content.hex)") == true)
    }

    @Test("a file another device added and uploaded is available; opening it downloads it whole, through a lost request, and a device whose file is removed behind its back may fetch it again")
    func uploadedFileOpensOnAnotherDevice() async throws {
        let run = try await Self.run(devices: 2)
        let (a, b) = (run.devices[0], run.devices[1])
        let key = RecordKey(kind: "pin", id: "p1")
        #expect(await run.makeEdit(device: 0, .create(kind: "pin", id: "p1", fields: ["photo": .attachment(Self.file)])))
        try await a.sync()
        try await b.sync()
        for device in 0..<2 { await run.checkAttachmentsAvailable(device: device) }
        #expect(run.violation == nil)
        #expect(try await b.liveStore().attachmentFile(Self.file) == nil, "not downloaded until opened")

        await run.perform(.openAttachment(device: 1, key: key, fault: .loseRequest, afterCalls: 1))
        #expect(run.violation == nil)
        #expect(run.statistics.attachmentsDownloaded == 1)
        #expect(b.disk.contents(of: Self.path(b, Self.file, pending: false)) == SimulationContents.bytes(of: Self.file.content))

        try b.disk.unlink(Self.path(b, Self.file, pending: false))
        await run.checkAttachmentsAvailable(device: 1)
        #expect(run.violation == nil, "the server holds it for u1")
    }

    @Test("an opened file whose bytes are not the content its name says is an attachment-available violation")
    func damagedFileIsReportedWhenOpened() async throws {
        let run = try await Self.run()
        let device = run.devices[0]
        #expect(await run.makeEdit(device: 0, .create(kind: "pin", id: "p1", fields: ["photo": .attachment(Self.file)])))
        device.disk.setContents(of: Self.path(device, Self.file, pending: true), to: [UInt8](repeating: 7, count: 70_000))
        await run.perform(.openAttachment(device: 0, key: RecordKey(kind: "pin", id: "p1"), fault: .none, afterCalls: 0))
        #expect(run.violation?.invariant == .attachmentAvailable)
        #expect(run.violation?.detail.contains("which does not hold sha256:\(Self.file.content.hex)") == true)
    }
}
