import Foundation
import SyncJournal

/// Files on notes: each note keeps its attachments in one field,
/// `attachments`, an object from the file's name to the attachment. The
/// field is outside the typed model, so both versions of the app keep it
/// as it is under their edits.
extension NotesRepository {
    /// The stored name of a note's attachments.
    public static let attachmentsField = "attachments"

    /// Copies the file at `path` beside the journal (durably, before the
    /// note refers to it) and adds it to note `id` under its file name,
    /// replacing an attachment of that name. Returns the attachment.
    ///
    /// - Throws: ``NotesError/noteNotFound(id:)``; ``NotesError/store(_:)``
    ///   with ``StoreError/attachmentFile(_:)`` when the file cannot be read.
    public func attach(id: String, fileAt path: String, mediaType: String? = nil) async throws(NotesError) -> (name: String, attachment: Attachment) {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let space = try await space(ofVisibleNote: id)
        do throws(StoreError) {
            let attachment = try await store.attach(fileAt: path, mediaType: mediaType ?? Self.mediaType(ofFileNamed: name))
            var attached = try await attachments(ofNote: id, in: space)
            attached[name] = attachment
            try await store.update(Self.kind, id: id, changes: [Self.attachmentsField: .object(attached.mapValues(FieldValue.attachment))],
                                   in: space)
            return (name, attachment)
        } catch {
            throw Self.translate(error, id: id)
        }
    }

    /// The attachment named `name` on note `id`.
    ///
    /// - Throws: ``NotesError/noteNotFound(id:)``, ``NotesError/noSuchAttachment(id:name:)``.
    public func attachment(named name: String, ofNote id: String) async throws(NotesError) -> Attachment {
        let space = try await space(ofVisibleNote: id)
        let attached: [String: Attachment]
        do throws(StoreError) { attached = try await attachments(ofNote: id, in: space) } catch { throw Self.translate(error, id: id) }
        guard let attachment = attached[name] else { throw .noSuchAttachment(id: id, name: name) }
        return attachment
    }

    /// Writes the attachment named `name` of note `id` to `output`: from this
    /// device's copy, else downloaded through `engine` first (none given: it
    /// must be here). The file appears at `output` whole or not at all.
    ///
    /// - Throws: ``NotesError/attachmentNotHere(id:name:)`` without an engine
    ///   when it is not on this device; ``NotesError/serverUnreachable(server:reason:)``
    ///   or ``NotesError/syncFailed(server:reason:)`` when the download fails.
    public func writeAttachment(named name: String, ofNote id: String, to output: String, downloadingWith engine: SyncEngine?,
                                server: String) async throws(NotesError) {
        let attachment = try await attachment(named: name, ofNote: id)
        var source: String?
        do throws(StoreError) { source = try await store.attachmentFile(attachment) } catch { throw Self.translate(error, id: id) }
        if source == nil {
            guard let engine else { throw .attachmentNotHere(id: id, name: name) }
            do throws(AttachmentDownloadError) {
                source = try await engine.download(attachment)
            } catch {
                switch error {
                case .transport(.offline), .transport(.serverUnreachable), .transport(.transient):
                    throw .serverUnreachable(server: server, reason: error.description)
                case .store(let failure): throw .store(failure)
                default: throw .syncFailed(server: server, reason: error.description)
                }
            }
        }
        guard let source else { throw .attachmentNotHere(id: id, name: name) }
        // Copied beside the output and renamed over it: never a half-written file under its name.
        let temporary = output + ".notes-partial"
        do {
            try? FileManager.default.removeItem(atPath: temporary)
            try FileManager.default.copyItem(atPath: source, toPath: temporary)
            if FileManager.default.fileExists(atPath: output) {
                _ = try FileManager.default.replaceItemAt(URL(fileURLWithPath: output), withItemAt: URL(fileURLWithPath: temporary))
            } else {
                try FileManager.default.moveItem(atPath: temporary, toPath: output)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw .directoryUnusable(directory: output, reason: (error as NSError).localizedDescription)
        }
    }

    /// The attachments of note `id` in `space`, by name (none when the field is absent or holds something else).
    func attachments(ofNote id: String, in space: SpaceID) async throws(StoreError) -> [String: Attachment] {
        guard let record = try await store.record(Self.kind, id: id, in: space) else { throw .recordNotFound(RecordKey(kind: Self.kind, id: id, space: space)) }
        return Self.attachments(in: record.fields)
    }

    /// The attachments a note's fields hold, by name.
    static func attachments(in fields: [String: FieldValue]) -> [String: Attachment] {
        guard case .object(let members)? = fields[attachmentsField] else { return [:] }
        return members.compactMapValues { value in if case .attachment(let attachment) = value { return attachment } else { return nil } }
    }

    /// A media type from a file name's extension; `application/octet-stream` for one not known.
    static func mediaType(ofFileNamed name: String) -> String {
        let types = ["jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "heic": "image/heic",
                     "webp": "image/webp", "pdf": "application/pdf", "txt": "text/plain", "md": "text/markdown",
                     "json": "application/json", "csv": "text/csv", "mp3": "audio/mpeg", "m4a": "audio/mp4",
                     "mp4": "video/mp4", "mov": "video/quicktime", "zip": "application/zip"]
        let ext = URL(fileURLWithPath: name).pathExtension.lowercased()
        return types[ext] ?? "application/octet-stream"
    }
}
