import Foundation
@testable import NotesApp
import SyncJournal
import SyncJournalCommandLine
import SyncJournalTesting
import Testing

/// Files on notes: attached on one device, uploaded by its sync, listed and
/// written out on another, which downloads them on demand.
@Suite("notes: files on notes", .timeLimit(.minutes(5)))
struct NotesAttachmentTests {
    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func read(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test("a file attached on one device is listed there as local, reaches the other device's list as not local, and writes out byte for byte after a download")
    func attachListWriteOut() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-attachments"); defer { scratch.remove() }
        let server = ReferenceServer()
        let a = try await NotesRepository.open(directory: scratch.file("a"))
        let b = try await NotesRepository.open(directory: scratch.file("b"))
        let engineA = a.engine(transport: server.transport(user: "u1"))
        let engineB = b.engine(transport: server.transport(user: "u1"))
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        try Self.write(bytes, to: scratch.file("tapas.jpg"))

        let id = try await a.add(text: "dinner")
        let (name, attachment) = try await a.attach(id: id, fileAt: scratch.file("tapas.jpg"))
        #expect(name == "tapas.jpg" && attachment.mediaType == "image/jpeg" && attachment.size == 200_000)
        let listedA = try #require(try await a.snapshot().notes.first)
        #expect(listedA.attachments == [ListedAttachment(name: "tapas.jpg", attachment: attachment, isLocal: true)])
        #expect(NotesListing.text(try await a.snapshot()).contains("[files: tapas.jpg 200000 bytes]"))

        guard case .ok = await engineA.sync() else { Issue.record("a's sync"); return }
        guard case .ok = await engineB.sync() else { Issue.record("b's sync"); return }
        let listedB = try #require(try await b.snapshot().notes.first)
        #expect(listedB.text == "dinner")
        #expect(listedB.attachments == [ListedAttachment(name: "tapas.jpg", attachment: attachment, isLocal: false)])
        let json = NotesListing.json(try await b.snapshot())
        #expect(json.contains(#""attachments":[{"name":"tapas.jpg","size":200000,"type":"image/jpeg","sha256":"\#(attachment.content.hex)","local":false}]"#))

        await #expect(throws: NotesError.attachmentNotHere(id: id, name: "tapas.jpg")) {
            try await b.writeAttachment(named: "tapas.jpg", ofNote: id, to: scratch.file("out.jpg"), downloadingWith: nil, server: "")
        }
        try await b.writeAttachment(named: "tapas.jpg", ofNote: id, to: scratch.file("out.jpg"), downloadingWith: engineB, server: "reference")
        #expect(try Self.read(scratch.file("out.jpg")) == bytes)
        #expect(try await b.snapshot().notes.first?.attachments.first?.isLocal == true)
        await #expect(throws: NotesError.noSuchAttachment(id: id, name: "other.pdf")) {
            _ = try await b.attachment(named: "other.pdf", ofNote: id)
        }
        await a.close(); await b.close()
    }

    @Test("an edit of the text on a device of version 1 keeps the note's files")
    func versionOneEditKeepsFiles() async throws {
        let scratch = try TemporaryDirectory(prefix: "syncjournal-notes-attachments"); defer { scratch.remove() }
        let repository = try await NotesRepository.open(directory: scratch.file("a"))
        try Self.write([1, 2, 3], to: scratch.file("a.txt"))
        let id = try await repository.add(text: "first")
        _ = try await repository.attach(id: id, fileAt: scratch.file("a.txt"))
        await repository.close()
        let old = try await NotesRepository.open(directory: scratch.file("a"), modelVersion: .version1)
        try await old.edit(id: id, text: "second")
        #expect(try await old.snapshot().notes.first?.attachments.map(\.name) == ["a.txt"])
        await old.close()
    }

    @Test("attach and attachment parse their arguments, and --type and --out go with them only")
    func parsing() throws {
        #expect(try NotesCommand.parse(["attach", "n1", "/tmp/x.pdf", "--dir", "d"]).action == .attach(id: "n1", file: "/tmp/x.pdf", mediaType: nil))
        #expect(try NotesCommand.parse(["attach", "n1", "/tmp/x", "--type", "text/plain", "--dir", "d"]).action
                == .attach(id: "n1", file: "/tmp/x", mediaType: "text/plain"))
        #expect(try NotesCommand.parse(["attachment", "n1", "x.pdf", "--out", "/tmp/y", "--dir", "d"]).action
                == .writeAttachment(id: "n1", name: "x.pdf", output: "/tmp/y"))
        #expect(throws: CommandLineError.self) { try NotesCommand.parse(["attachment", "n1", "x.pdf", "--dir", "d"]) }
        #expect(throws: CommandLineError.self) { try NotesCommand.parse(["attach", "n1", "--dir", "d"]) }
        #expect(throws: CommandLineError.self) { try NotesCommand.parse(["list", "--out", "/tmp/y", "--dir", "d"]) }
        #expect(throws: CommandLineError.self) { try NotesCommand.parse(["list", "--type", "a/b", "--dir", "d"]) }
    }
}
