import SyncJournalProtocol

/// Records every push and pull that passes through it (and the pages
/// pulled), in order, and every attachment call; membership calls pass
/// through unrecorded.
package actor RecordingTransport: SyncTransport {
    package enum Request: Sendable, Hashable {
        case push([Mutation])
        case pull(PullRequest)

        package var isPush: Bool { if case .push = self { return true } else { return false } }
    }

    private let base: any SyncTransport
    package private(set) var requests: [Request] = []
    package private(set) var pages: [PullPage] = []
    /// The expectation each push carried, in order.
    package private(set) var expectations: [ServerExpectation?] = []
    /// The replies of the push requests that returned, in order.
    package private(set) var pushReplies: [[MutationResult]] = []
    /// Pushes and attachment calls that reached the transport, in order:
    /// `push`, `status`, `upload OFFSET+COUNT`, `download OFFSET`.
    package private(set) var calls: [String] = []

    package init(_ base: any SyncTransport) { self.base = base }

    package func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        try await push(mutations, expecting: nil)
    }

    package func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        requests.append(.push(mutations))
        calls.append("push")
        expectations.append(expectation)
        let results = try await base.push(mutations, expecting: expectation)
        pushReplies.append(results)
        return results
    }

    package func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        requests.append(.pull(request))
        let page = try await base.pull(request)
        pages.append(page)
        return page
    }

    /// Sends a membership change through, unrecorded.
    package func change(_ change: SpaceChange) async throws(TransportError) -> Space? {
        try await base.change(change)
    }

    /// Lists the user's shared spaces through, unrecorded.
    package func spaces() async throws(TransportError) -> [Space] {
        try await base.spaces()
    }

    /// `push` or `pull`, one per request.
    package var order: [String] { requests.map { $0.isPush ? "push" : "pull" } }

    /// The mutations of each push request.
    package var pushBatches: [[Mutation]] {
        requests.compactMap { if case .push(let batch) = $0 { return batch } else { return nil } }
    }

    /// Every pull request.
    package var pullRequests: [PullRequest] {
        requests.compactMap { if case .pull(let request) = $0 { return request } else { return nil } }
    }

    /// Every row pulled, in order.
    package var pulledRows: [ServerRow] { pages.flatMap(\.rows) }

    package func attachmentStatus(_ contents: [AttachmentStatusRequest]) async throws(TransportError) -> [AttachmentStatus] {
        calls.append("status")
        return try await base.attachmentStatus(contents)
    }

    package func uploadAttachment(_ chunk: AttachmentChunk) async throws(TransportError) -> AttachmentUploadProgress {
        calls.append("upload \(chunk.offset)+\(chunk.bytes.count)")
        return try await base.uploadAttachment(chunk)
    }

    package func downloadAttachment(_ content: ContentHash, offset: Int64, length: Int) async throws(TransportError) -> AttachmentDownload {
        calls.append("download \(offset)")
        return try await base.downloadAttachment(content, offset: offset, length: length)
    }
}
