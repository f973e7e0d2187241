import SyncJournalProtocol
import SyncJournalWire

extension SyncRouter: ParkingResponder {
    /// The reply to one request; a wait for changes (`POST /v1/sync/wait`)
    /// with nothing to report yet is parked instead (`nil`) and answered
    /// through `handle` when its user's rows change or its timeout passes.
    ///
    /// ```swift
    /// let response = router.respond(to: request, handle: handle)   // nil: parked
    /// ```
    package func respond(to request: HTTPRequest, handle: ResponseHandle) -> HTTPResponse? {
        guard request.path == SyncEndpoint.wait.path, request.method == SyncEndpoint.wait.method,
              let user = authenticatedUser(request) else {
            return respond(to: request)
        }
        // The answer given now, and the one sent later through the handle, both carry the identity.
        let identity = identityHeaders
        return respondToWait(request, user: user, handle: handle.adding(identity)).map { Self.adding(identity, to: $0) }
    }

    private func respondToWait(_ request: HTTPRequest, user: String, handle: ResponseHandle) -> HTTPResponse? {
        let wait: ChangeWaitRequest
        do throws(RouteFailure) {
            wait = try decode { () throws(WireError) in try ChangeWaitRequestCodec.decode(request.body) }
        } catch {
            return reply(to: error, endpoint: .wait, user: user)
        }
        // A wait naming spaces follows every space of its user and those it
        // names: read before it is registered, so a membership change after
        // the read is either heard or seen by the look below.
        var followed: Set<SpaceID> = []
        if let named = wait.spaces {
            do throws(StorageError) {
                followed = try storage.followedSpaces(user: user, named: named)
            } catch {
                return reply(to: .storage(error), endpoint: .wait, user: user)
            }
        }
        let id = changeWaits.makeID()
        // Parked first, so an answer sent by a wake-up arrives after it.
        let registry = changeWaits
        handle.park(answerOnStop: ChangeWaitRegistry.reply(changed: false)) { registry.drop(id) }
        // Registered before the look at storage: a push committing during
        // the look marks the wait woken instead of slipping past it.
        switch changeWaits.register(id, user: user, cursors: wait.cursors, spaces: followed, handle: handle) {
        case .registered:
            break
        case .tooMany(let limit):
            return Self.error(429, .tooManyRequests, "this user holds \(limit) waits for changes already, at most \(limit); retry later",
                              headers: [HTTPHeader(name: "Retry-After", value: "1")])
        case .closed:
            return nil
        }
        let changed: Bool
        do throws(StorageError) {
            changed = try hasChanges(user: user, wait)
        } catch {
            changeWaits.remove(id)
            return reply(to: .storage(error), endpoint: .wait, user: user)
        }
        if changed {
            changeWaits.remove(id)
            return ChangeWaitRegistry.reply(changed: true)
        }
        if !changeWaits.park(id, milliseconds: wait.timeoutMilliseconds) {
            // Woken during the look (a closed connection's answer goes nowhere).
            return ChangeWaitRegistry.reply(changed: true)
        }
        return nil
    }

    /// A wait answered from one look at storage, for a caller that cannot
    /// park (``respond(to:)-(HTTPRequest)``): `{"changed": true}` when rows
    /// are there, `{"changed": false}` at once otherwise.
    func waitWithoutParking(_ body: [UInt8], user: String) throws(RouteFailure) -> HTTPResponse {
        let wait = try decode { () throws(WireError) in try ChangeWaitRequestCodec.decode(body) }
        do throws(StorageError) {
            return ChangeWaitRegistry.reply(changed: try hasChanges(user: user, wait))
        } catch {
            throw .storage(error)
        }
    }

    /// Whether a pull of `user` with `wait`'s cursors (and spaces, when it
    /// names them) would bring anything: a wait that names no spaces looks
    /// at the personal space alone, as before spaces.
    private func hasChanges(user: String, _ wait: ChangeWaitRequest) throws(StorageError) -> Bool {
        guard let spaces = wait.spaces else { return try Self.hasChanges(in: storage, user: user, after: wait.cursors) }
        return try storage.hasChanges(user: user, after: wait.cursors, spaces: spaces)
    }

    /// Whether `user` has a row of one of the kinds after its cursor in
    /// `storage` (by the pull's own rule: one pull of one row). A cursor
    /// behind purged tombstones counts as a change: the client's pull hears of it (410).
    ///
    /// A wait names up to ``ChangeWaitRequestCodec/maximumKinds`` kinds, more
    /// than one pull may (``ProtocolLimits/maximumKindsPerPull``): the kinds
    /// are looked at one pull's worth at a time, in name order, stopping at
    /// the first that has a change.
    package static func hasChanges(in storage: any SyncStorage, user: String, after cursors: [String: PullCursor?]) throws(StorageError) -> Bool {
        let kinds = cursors.keys.sorted()
        var start = 0
        while start < kinds.count {
            let end = min(start + ProtocolLimits.maximumKindsPerPull, kinds.count)
            var part: [String: PullCursor?] = [:]
            part.reserveCapacity(end - start)
            // updateValue: a subscript assignment of a nil cursor would drop the kind.
            for kind in kinds[start..<end] { part.updateValue(cursors[kind] ?? nil, forKey: kind) }
            do {
                if try !storage.pull(user: user, PullRequest(cursors: part, limit: 1)).rows.isEmpty { return true }
            } catch {
                if case .cursorExpired = error { return true }
                throw error
            }
            start = end
        }
        return false
    }
}
