import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// Sends kind `pin` as `pin-RUN` and renames it back in every answer, so a
/// simulation on a shared `sync-server` database sees only its own rows:
/// pulls are per kind, so earlier runs' rows never reach this run's devices.
struct KindRenamingTransport: SyncTransport {
    let base: any SyncTransport
    /// The suffix added to every kind (`-RUN`).
    let suffix: String

    func outward(_ kind: String) -> String { kind + suffix }

    func inward(_ kind: String) -> String { kind.hasSuffix(suffix) ? String(kind.dropLast(suffix.count)) : kind }

    func inward(_ row: ServerRow) -> ServerRow {
        var row = row
        row.kind = inward(row.kind)
        return row
    }

    func inward(_ outcome: MutationOutcome) -> MutationOutcome {
        switch outcome {
        case .applied(let row): return .applied(inward(row))
        case .conflict(let server): return .conflict(server: server.map(inward))
        case .rejected, .duplicate, .noMatch: return outcome
        }
    }

    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        try await push(mutations, expecting: nil)
    }

    func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        let renamed = mutations.map { mutation in
            var mutation = mutation
            mutation.kind = outward(mutation.kind)
            return mutation
        }
        return try await base.push(renamed, expecting: expectation).map { MutationResult(operationID: $0.operationID, outcome: inward($0.outcome)) }
    }

    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        var renamed = request
        renamed.cursors = Dictionary(uniqueKeysWithValues: request.cursors.map { (outward($0.key), $0.value) })
        let page: PullPage
        do throws(TransportError) {
            page = try await base.pull(renamed)
        } catch {
            if case .cursorExpired(let kinds) = error { throw .cursorExpired(kinds: kinds.map(inward)) }
            throw error
        }
        return PullPage(rows: page.rows.map(inward),
                        nextCursors: Dictionary(uniqueKeysWithValues: page.nextCursors.map { (inward($0.key), $0.value) }),
                        hasMore: page.hasMore, server: page.server)
    }

    func read(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        try await base.read(kind: outward(kind), id: id).map(inward)
    }

    // Contents are named by their bytes, not by kind: attachment calls pass as they are.

    func attachmentStatus(_ contents: [AttachmentStatusRequest]) async throws(TransportError) -> [AttachmentStatus] {
        try await base.attachmentStatus(contents)
    }

    func uploadAttachment(_ chunk: AttachmentChunk) async throws(TransportError) -> AttachmentUploadProgress {
        try await base.uploadAttachment(chunk)
    }

    func downloadAttachment(_ content: ContentHash, offset: Int64, length: Int) async throws(TransportError) -> AttachmentDownload {
        try await base.downloadAttachment(content, offset: offset, length: length)
    }
}
