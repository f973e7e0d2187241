import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// Wraps a transport and injects the failures a real network has, for tests
/// and the simulator: offline, transient and permanent errors, a request
/// refused as too large, a request lost before the server, a reply lost
/// after the server applied it, duplicate delivery, and a request **held**
/// until the test releases it (so a race is staged deliberately, never with
/// a sleep). Pushes, pulls, single-row reads (of any space), waits for
/// changes (with the shared spaces they follow) and membership calls all
/// pass through it.
///
/// ```swift
/// let faulty = FaultInjectingTransport(server.transport(user: "u1"))
/// await faulty.holdNextRequest()
/// async let outcome = engine.sync()
/// await faulty.waitUntilHeld()          // the push is open, the server has not seen it
/// try await store.delete("pin", id: id) // deleted while its create is in flight
/// await faulty.releaseHeld()
/// ```
public actor FaultInjectingTransport: SyncTransport {
    /// A failure for the next request.
    public enum Fault: Sendable, Hashable {
        /// Fails with ``TransportError/offline`` without reaching the server.
        case offline
        /// Fails with a transient error without reaching the server.
        case transient(reason: String, retryAfter: Duration?)
        /// Fails with a permanent error without reaching the server.
        case permanent(reason: String)
        /// Fails with ``TransportError/tooLarge(reason:)`` (HTTP 413) without
        /// reaching the server.
        ///
        /// ```swift
        /// await faulty.inject(.tooLarge(reason: "413"), on: .push)   // the engine splits the batch
        /// ```
        case tooLarge(reason: String)
        /// The request is lost before the server: a transient timeout.
        case loseRequest
        /// The server handles the request, the reply is lost: a transient timeout.
        case loseReply
        /// The server receives the request twice; the second reply returns.
        case duplicate
        /// The request waits before the server until ``releaseHeld(deliverReply:)``.
        /// A held wait for changes is a hung connection: it neither answers nor fails.
        case hold
        /// Fails with ``TransportError/serverUnreachable(reason:)`` (connection
        /// refused) without reaching the server.
        case serverUnreachable(reason: String)
        /// Fails with ``TransportError/unauthorized(reason:)`` (a 401 that a
        /// fresh token did not cure) without reaching the server.
        case unauthorized(reason: String)
        /// Lets the request through untouched: queued before another fault,
        /// it aims that fault at a later request.
        ///
        /// ```swift
        /// // The third upload chunk is lost on its way.
        /// await faulty.inject(.pass, on: .attachment, times: 3)
        /// await faulty.inject(.loseRequest, on: .attachment)
        /// ```
        case pass
    }

    /// Which requests a fault applies to.
    public enum RequestKind: Sendable, Hashable {
        /// Push requests.
        case push
        /// Pull requests.
        case pull
        /// Single-row reads (``SyncTransport/read(kind:id:)``, ``SyncTransport/read(_:)``).
        case read
        /// Membership calls and the list of spaces (``SyncTransport/change(_:)``, ``SyncTransport/spaces()``).
        case membership
        /// Waits for changes (``SyncTransport/waitForChanges(after:timeout:)``):
        /// only faults aimed at them apply, never ``any``.
        case changeWait
        /// Attachment calls: status, an upload chunk, a download chunk.
        case attachment
        /// Any push, pull, read, membership or attachment call.
        case any
    }

    private let base: any SyncTransport
    private var offline = false
    private var faults: [(Fault, RequestKind)] = []
    private var held: [CheckedContinuation<Bool, Never>] = []
    private var heldWatchers: [CheckedContinuation<Void, Never>] = []
    private var requests = 0
    private var changeWaits = 0

    /// Wraps `base`.
    public init(_ base: any SyncTransport) {
        self.base = base
    }

    /// While offline, every request fails with ``TransportError/offline``.
    public func setOffline(_ value: Bool) { offline = value }

    /// Queues `fault` for the next request of `kind` (faults apply in order).
    public func inject(_ fault: Fault, on kind: RequestKind = .any) { faults.append((fault, kind)) }

    /// Queues `fault` for the next `times` requests of `kind`.
    ///
    /// ```swift
    /// // A 503 storm: the next 20 pushes fail, each with a retry-after of 2 s.
    /// await faulty.inject(.transient(reason: "503", retryAfter: .milliseconds(2_000)), on: .push, times: 20)
    /// ```
    public func inject(_ fault: Fault, on kind: RequestKind = .any, times: Int) {
        for _ in 0..<max(0, times) { faults.append((fault, kind)) }
    }

    /// Faults queued and not yet used.
    ///
    /// ```swift
    /// #expect(await faulty.pendingFaults == 0, "the storm is over")
    /// ```
    public var pendingFaults: Int { faults.count }

    /// Forgets every queued fault (held requests stay held).
    ///
    /// ```swift
    /// await faulty.clearFaults()
    /// ```
    public func clearFaults() { faults = [] }

    /// Holds the next request of `kind` before it reaches the server.
    public func holdNextRequest(_ kind: RequestKind = .push) { inject(.hold, on: kind) }

    /// Requests seen (including failed ones), not counting waits for changes.
    public var requestCount: Int { requests }

    /// Waits for changes seen (including failed and held ones).
    ///
    /// ```swift
    /// #expect(await faulty.changeWaitCount == 2, "the hung wait was replaced")
    /// ```
    public var changeWaitCount: Int { changeWaits }

    /// Whether a request is being held now.
    public var isHolding: Bool { !held.isEmpty }

    /// Returns once a request is held (at once if one already is).
    public func waitUntilHeld() async {
        if !held.isEmpty { return }
        await withCheckedContinuation { heldWatchers.append($0) }
    }

    /// Lets the oldest held request reach the server. With `deliverReply`
    /// false the server applies it but the reply is lost (a crash or a dropped
    /// connection): the caller gets a transient error.
    public func releaseHeld(deliverReply: Bool = true) {
        guard !held.isEmpty else { return }
        held.removeFirst().resume(returning: deliverReply)
    }

    private func nextFault(for kind: RequestKind) -> Fault? {
        guard let index = faults.firstIndex(where: { ($0.1 == .any && kind != .changeWait) || $0.1 == kind }) else { return nil }
        return faults.remove(at: index).0
    }

    private func perform<T: Sendable>(_ kind: RequestKind, _ send: @Sendable () async throws(TransportError) -> T) async throws(TransportError) -> T {
        if kind == .changeWait { changeWaits += 1 } else { requests += 1 }
        if offline { throw .offline }
        switch nextFault(for: kind) {
        case nil, .pass?:
            return try await send()
        case .offline?:
            throw .offline
        case .transient(let reason, let after)?:
            throw .transient(reason: reason, retryAfter: after)
        case .permanent(let reason)?:
            throw .permanent(reason: reason)
        case .tooLarge(let reason)?:
            throw .tooLarge(reason: reason)
        case .serverUnreachable(let reason)?:
            throw .serverUnreachable(reason: reason)
        case .unauthorized(let reason)?:
            throw .unauthorized(reason: reason)
        case .loseRequest?:
            throw .transient(reason: "timeout (request lost)", retryAfter: nil)
        case .loseReply?:
            _ = try await send()
            throw .transient(reason: "timeout (reply lost)", retryAfter: nil)
        case .duplicate?:
            _ = try await send()
            return try await send()
        case .hold?:
            let deliver = await withCheckedContinuation { continuation in
                held.append(continuation)
                let watchers = heldWatchers
                heldWatchers = []
                for watcher in watchers { watcher.resume() }
            }
            let reply = try await send()
            guard deliver else { throw .transient(reason: "connection lost (reply lost)", retryAfter: nil) }
            return reply
        }
    }

    public func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        try await push(mutations, expecting: nil)
    }

    /// Pushes through the wrapped transport with the device's expectation;
    /// faults queued for ``RequestKind/push`` or ``RequestKind/any`` apply.
    public func push(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        let base = self.base
        return try await perform(.push) { () async throws(TransportError) -> [MutationResult] in
            try await base.push(mutations, expecting: expectation)
        }
    }

    public func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        let base = self.base
        return try await perform(.pull) { () async throws(TransportError) -> PullPage in try await base.pull(request) }
    }

    /// Reads through the wrapped transport; faults queued for ``RequestKind/read``
    /// or ``RequestKind/any`` apply.
    public func read(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        let base = self.base
        return try await perform(.read) { () async throws(TransportError) -> ServerRow? in try await base.read(kind: kind, id: id) }
    }

    /// Waits through the wrapped transport; only faults queued for
    /// ``RequestKind/changeWait`` apply (and ``setOffline(_:)``).
    public func waitForChanges(after cursors: [String: PullCursor?], timeout: Duration) async throws(TransportError) -> ChangeWaitResult {
        let base = self.base
        return try await perform(.changeWait) { () async throws(TransportError) -> ChangeWaitResult in
            try await base.waitForChanges(after: cursors, timeout: timeout)
        }
    }

    /// Reads a row of any space through the wrapped transport; faults
    /// queued for ``RequestKind/read`` or ``RequestKind/any`` apply.
    public func read(_ key: RecordKey) async throws(TransportError) -> ServerRow? {
        let base = self.base
        return try await perform(.read) { () async throws(TransportError) -> ServerRow? in try await base.read(key) }
    }

    /// Waits through the wrapped transport, following the shared spaces
    /// named; only faults queued for ``RequestKind/changeWait`` apply (and
    /// ``setOffline(_:)``).
    public func waitForChanges(after cursors: [String: PullCursor?], spaces: [SpaceID: SpaceCursors]?,
                               timeout: Duration) async throws(TransportError) -> ChangeWaitResult {
        let base = self.base
        return try await perform(.changeWait) { () async throws(TransportError) -> ChangeWaitResult in
            try await base.waitForChanges(after: cursors, spaces: spaces, timeout: timeout)
        }
    }

    /// Sends a membership change through the wrapped transport; faults
    /// queued for ``RequestKind/membership`` or ``RequestKind/any`` apply.
    public func change(_ change: SpaceChange) async throws(TransportError) -> Space? {
        let base = self.base
        return try await perform(.membership) { () async throws(TransportError) -> Space? in try await base.change(change) }
    }

    /// Lists the user's shared spaces through the wrapped transport; faults
    /// queued for ``RequestKind/membership`` or ``RequestKind/any`` apply.
    public func spaces() async throws(TransportError) -> [Space] {
        let base = self.base
        return try await perform(.membership) { () async throws(TransportError) -> [Space] in try await base.spaces() }
    }

    /// Asks which contents the server holds through the wrapped transport;
    /// faults queued for ``RequestKind/attachment`` or ``RequestKind/any`` apply.
    public func attachmentStatus(_ contents: [AttachmentStatusRequest]) async throws(TransportError) -> [AttachmentStatus] {
        let base = self.base
        return try await perform(.attachment) { () async throws(TransportError) -> [AttachmentStatus] in try await base.attachmentStatus(contents) }
    }

    /// Sends an upload chunk through the wrapped transport; faults queued
    /// for ``RequestKind/attachment`` or ``RequestKind/any`` apply.
    public func uploadAttachment(_ chunk: AttachmentChunk) async throws(TransportError) -> AttachmentUploadProgress {
        let base = self.base
        return try await perform(.attachment) { () async throws(TransportError) -> AttachmentUploadProgress in try await base.uploadAttachment(chunk) }
    }

    /// Fetches a download chunk through the wrapped transport; faults
    /// queued for ``RequestKind/attachment`` or ``RequestKind/any`` apply.
    public func downloadAttachment(_ content: ContentHash, offset: Int64, length: Int) async throws(TransportError) -> AttachmentDownload {
        let base = self.base
        return try await perform(.attachment) { () async throws(TransportError) -> AttachmentDownload in
            try await base.downloadAttachment(content, offset: offset, length: length)
        }
    }
}
