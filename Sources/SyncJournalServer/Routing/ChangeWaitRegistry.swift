import Dispatch
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalWire

/// The waits for changes (`POST /v1/sync/wait`) that the router holds,
/// keyed by user, each with the handle its answer goes through. A parked
/// wait holds no thread: a storage change of its user (``wake(_:)``)
/// answers it `{"changed": true}`, its timer `{"changed": false}`, and a
/// closed connection drops it (``drop(_:)``).
///
/// A wait is registered before its first look at storage
/// (``register(_:user:cursors:handle:)``), so a push that commits during the
/// look marks it woken rather than slipping past; ``park(_:milliseconds:)``
/// then answers at once if it was.
///
/// A wait follows its user's shared spaces (the ones the router passes to
/// ``register(_:user:cursors:spaces:handle:)``: those the user is a member
/// of when the wait opens, and those it names): a push into one of them
/// (``StorageChange/committedInSpace(_:kinds:)``) or a change of its
/// membership (``StorageChange/membershipChanged(_:users:)``) answers it,
/// and so does a membership change of its own user in any space (a space
/// joined, left or lost), whether or not it followed that space.
///
/// When changes may have gone unheard (``StorageChange/unknown``: the
/// connection that hears other servers' pushes was lost and made again),
/// each parked wait is looked at again with the registry's `recheck`, off
/// the caller's thread: only those whose user has rows past their cursors
/// are answered, so a lost connection does not send every device to pull at once.
///
/// ```swift
/// let id = registry.makeID()
/// guard registry.register(id, user: "u1", cursors: ["pin": nil], handle: handle) == .registered else { … }
/// if storageHasRows { registry.remove(id); return changed } else if !registry.park(id, milliseconds: 30_000) { return changed }
/// ```
package final class ChangeWaitRegistry: Sendable {
    /// What ``register(_:user:kinds:handle:)`` did.
    package enum Registration: Sendable, Hashable {
        /// The wait is held.
        case registered
        /// The user holds ``maximumWaitsPerUser`` waits already (a 429).
        case tooMany(limit: Int)
        /// Its connection closed before it was registered: nothing to answer.
        case closed
    }

    private struct Waiter {
        var user: String
        /// The wait's cursors: its kinds, and where a look at storage starts.
        var cursors: [String: PullCursor?]
        /// The shared spaces it follows.
        var spaces: Set<SpaceID>
        var handle: ResponseHandle
        /// A change came while the wait's first look at storage ran.
        var woken = false
        /// Parked: waiting for a change or its timer.
        var parked = false
        var timer: DispatchWorkItem?
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var perUser: [String: Int] = [:]
        /// Numbers handed out by ``makeID()`` and not yet registered.
        var unregistered: Set<UInt64> = []
        /// Waits whose connection closed before they were registered.
        var closedEarly: Set<UInt64> = []
        var nextID: UInt64 = 1
        /// Callers of ``waitUntil(timeoutMilliseconds:parkedOnly:_:)``, their
        /// conditions, and whether they count parked waits only.
        var watchers: [(condition: @Sendable (Int) -> Bool, parkedOnly: Bool, signal: DispatchSemaphore)] = []
    }

    /// The most waits one user may hold at once; more are answered 429.
    package let maximumWaitsPerUser: Int
    /// The longest a wait is held; a request asking for more is held this long.
    package let maximumWaitMilliseconds: Int64

    private let state = Mutex(State())
    private let timers = DispatchQueue(label: "SyncJournalServer.ChangeWaitRegistry.timers")
    /// Whether a user has rows past the cursors (true also when storage
    /// cannot tell); `nil` answers every parked wait after an unknown change.
    private let recheck: (@Sendable (_ user: String, _ cursors: [String: PullCursor?]) -> Bool)?
    /// Runs the looks at storage after an unknown change (they block on storage).
    private let rechecks = DispatchQueue(label: "SyncJournalServer.ChangeWaitRegistry.rechecks")

    /// A registry holding at most `maximumWaitsPerUser` waits per user, each
    /// at most `maximumWaitMilliseconds`; after an unknown change, parked
    /// waits are answered only when `recheck` finds rows past their cursors
    /// (all of them without `recheck`).
    package init(maximumWaitsPerUser: Int = 16, maximumWaitMilliseconds: Int64 = 60_000,
                 recheck: (@Sendable (_ user: String, _ cursors: [String: PullCursor?]) -> Bool)? = nil) {
        self.maximumWaitsPerUser = max(1, maximumWaitsPerUser)
        self.maximumWaitMilliseconds = max(0, maximumWaitMilliseconds)
        self.recheck = recheck
    }

    /// A number for a new wait, never used before; it must be passed to
    /// ``register(_:user:kinds:handle:)`` next.
    package func makeID() -> UInt64 {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.unregistered.insert(state.nextID)
            return state.nextID
        }
    }

    /// Holds wait `id` of `user` on the kinds of `cursors`, in the personal
    /// space and in the shared `spaces`, answering through `handle`.
    package func register(_ id: UInt64, user: String, cursors: [String: PullCursor?], spaces: Set<SpaceID> = [],
                          handle: ResponseHandle) -> Registration {
        let (registration, watchers) = state.withLock { state -> (Registration, [DispatchSemaphore]) in
            state.unregistered.remove(id)
            if state.closedEarly.remove(id) != nil { return (.closed, []) }
            let held = state.perUser[user, default: 0]
            if held >= maximumWaitsPerUser { return (.tooMany(limit: maximumWaitsPerUser), []) }
            state.perUser[user] = held + 1
            state.waiters[id] = Waiter(user: user, cursors: cursors, spaces: spaces, handle: handle)
            return (.registered, Self.ready(&state))
        }
        for signal in watchers { signal.signal() }
        return registration
    }

    /// Parks wait `id` after its first look found nothing: its timer starts.
    /// Returns `false` when the wait is not to be parked: a change came
    /// during the look (the caller answers `changed`; the wait is removed)
    /// or it is gone (its connection closed).
    package func park(_ id: UInt64, milliseconds: Int64) -> Bool {
        let timer = DispatchWorkItem { [weak self] in self?.expire(id) }
        let (parked, watchers) = state.withLock { state -> (Bool, [DispatchSemaphore]) in
            guard var waiter = state.waiters[id] else { return (false, []) }
            if waiter.woken {
                Self.take(id, from: &state)
                return (false, Self.ready(&state))
            }
            waiter.parked = true
            waiter.timer = timer
            state.waiters[id] = waiter
            return (true, Self.ready(&state))
        }
        for signal in watchers { signal.signal() }
        if parked { timers.asyncAfter(deadline: .now() + .milliseconds(Int(clamping: min(milliseconds, maximumWaitMilliseconds))), execute: timer) }
        return parked
    }

    /// Forgets wait `id` without answering it (the caller answers).
    package func remove(_ id: UInt64) {
        let watchers = state.withLock { state -> [DispatchSemaphore] in
            Self.take(id, from: &state)?.timer?.cancel()
            return Self.ready(&state)
        }
        for signal in watchers { signal.signal() }
    }

    /// Forgets wait `id` whose connection closed; one not registered yet is
    /// refused when it comes.
    package func drop(_ id: UInt64) {
        let watchers = state.withLock { state -> [DispatchSemaphore] in
            if let waiter = Self.take(id, from: &state) {
                waiter.timer?.cancel()
            } else if state.unregistered.contains(id) {
                state.closedEarly.insert(id)
            }
            return Self.ready(&state)
        }
        for signal in watchers { signal.signal() }
    }

    /// Answers the waits a storage change concerns `{"changed": true}` (the
    /// parked ones now; those still looking at storage when their look ends).
    /// After an unknown change, with a `recheck`, the parked waits are
    /// looked at again instead, and answered only if their user has rows past their cursors.
    package func wake(_ change: StorageChange) {
        let rechecking = change == .unknown && recheck != nil
        let (answered, toRecheck, watchers) = state.withLock { state -> ([Waiter], [UInt64], [DispatchSemaphore]) in
            var answered: [Waiter] = []
            var toRecheck: [UInt64] = []
            for (id, waiter) in state.waiters where Self.concerns(change, waiter) {
                if waiter.parked {
                    // The recheck looks at the personal space alone: a wait following spaces is answered.
                    if rechecking && waiter.spaces.isEmpty {
                        toRecheck.append(id)
                    } else if let taken = Self.take(id, from: &state) {
                        answered.append(taken)
                    }
                } else {
                    // Its look at storage may have started before a change that went unheard.
                    state.waiters[id]?.woken = true
                }
            }
            return (answered, toRecheck, answered.isEmpty ? [] : Self.ready(&state))
        }
        answer(answered)
        for signal in watchers { signal.signal() }
        if !toRecheck.isEmpty { rechecks.async { self.recheckParked(toRecheck) } }
    }

    /// Looks at storage again for each wait of `ids` still parked, once per
    /// user and cursors, and answers those with rows past their cursors.
    private func recheckParked(_ ids: [UInt64]) {
        guard let recheck else { return }
        struct Look: Hashable {
            var user: String
            var cursors: [String: PullCursor?]
        }
        let looks = state.withLock { state -> [Look: [UInt64]] in
            var looks: [Look: [UInt64]] = [:]
            for id in ids {
                guard let waiter = state.waiters[id], waiter.parked else { continue }
                looks[Look(user: waiter.user, cursors: waiter.cursors), default: []].append(id)
            }
            return looks
        }
        for (look, waits) in looks where recheck(look.user, look.cursors) {
            let (answered, watchers) = state.withLock { state -> ([Waiter], [DispatchSemaphore]) in
                // A wait may have been answered, timed out or closed meanwhile.
                let answered = waits.compactMap { id in state.waiters[id]?.parked == true ? Self.take(id, from: &state) : nil }
                return (answered, answered.isEmpty ? [] : Self.ready(&state))
            }
            answer(answered)
            for signal in watchers { signal.signal() }
        }
    }

    /// Returns once every look at storage begun after an unknown change has
    /// ended (for tests that check what those looks answered).
    package func finishRechecks() {
        rechecks.sync {}
    }

    private func answer(_ waiters: [Waiter]) {
        for waiter in waiters {
            waiter.timer?.cancel()
            waiter.handle.send(Self.reply(changed: true))
        }
    }

    /// The waits held now (looking at storage or parked).
    package var count: Int { state.withLock { $0.waiters.count } }

    /// The waits `user` holds now.
    package func count(user: String) -> Int { state.withLock { $0.perUser[user, default: 0] } }

    /// Blocks until `condition` holds for the number of waits held (with
    /// `parkedOnly`, of those parked: past their first look at storage), or
    /// `timeoutMilliseconds` passes; returns whether it held. For tests that
    /// must know a wait is held (or released) before they act.
    package func waitUntil(timeoutMilliseconds: Int = 30_000, parkedOnly: Bool = false,
                           _ condition: @escaping @Sendable (Int) -> Bool) -> Bool {
        let signal = DispatchSemaphore(value: 0)
        let holds = state.withLock { state -> Bool in
            if condition(Self.count(state, parkedOnly: parkedOnly)) { return true }
            state.watchers.append((condition, parkedOnly, signal))
            return false
        }
        if holds { return true }
        return signal.wait(timeout: .now() + .milliseconds(timeoutMilliseconds)) == .success
    }

    /// The `200` answer of a wait.
    package static func reply(changed: Bool) -> HTTPResponse {
        .json(status: 200, body: ChangeWaitReplyCodec.encode(changed: changed))
    }

    private func expire(_ id: UInt64) {
        let (expired, watchers) = state.withLock { state -> (Waiter?, [DispatchSemaphore]) in
            guard state.waiters[id]?.parked == true else { return (nil, []) }
            let taken = Self.take(id, from: &state)
            return (taken, Self.ready(&state))
        }
        expired?.handle.send(Self.reply(changed: false))
        for signal in watchers { signal.signal() }
    }

    private static func concerns(_ change: StorageChange, _ waiter: Waiter) -> Bool {
        concerns(change, user: waiter.user, kinds: waiter.cursors.keys, spaces: waiter.spaces)
    }

    /// Whether `change` may end a wait of `user` on `kinds` that follows
    /// `spaces`: a push of the user's own or into a followed space of one
    /// of the kinds (or of any kind), a change of a followed space's
    /// membership or of the user's own membership anywhere, or anything
    /// after changes went unheard.
    package static func concerns(_ change: StorageChange, user: String, kinds: some Collection<String>, spaces: Set<SpaceID>) -> Bool {
        switch change {
        case .unknown: return true
        case .committed(let pusher, let written):
            return pusher == user && (written.isEmpty || written.contains { kinds.contains($0) })
        case .committedInSpace(let space, let written):
            return spaces.contains(space) && (written.isEmpty || written.contains { kinds.contains($0) })
        case .membershipChanged(let space, let users):
            return spaces.contains(space) || users.contains(user)
        }
    }

    @discardableResult
    private static func take(_ id: UInt64, from state: inout State) -> Waiter? {
        guard let waiter = state.waiters.removeValue(forKey: id) else { return nil }
        let remaining = state.perUser[waiter.user, default: 1] - 1
        state.perUser[waiter.user] = remaining > 0 ? remaining : nil
        return waiter
    }

    /// Removes and returns the watchers whose condition now holds.
    private static func ready(_ state: inout State) -> [DispatchSemaphore] {
        guard !state.watchers.isEmpty else { return [] }
        let held = state.waiters.count
        let parked = count(state, parkedOnly: true)
        var ready: [DispatchSemaphore] = []
        state.watchers.removeAll { watcher in
            guard watcher.condition(watcher.parkedOnly ? parked : held) else { return false }
            ready.append(watcher.signal)
            return true
        }
        return ready
    }

    private static func count(_ state: State, parkedOnly: Bool) -> Int {
        parkedOnly ? state.waiters.values.reduce(0) { $0 + ($1.parked ? 1 : 0) } : state.waiters.count
    }
}
