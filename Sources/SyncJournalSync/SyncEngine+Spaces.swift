import SyncJournalProtocol
import SyncJournalStore

// Membership: the calls that make, change and leave shared spaces. Each goes
// to the server at once (a membership is the server's to grant, so none of
// them is queued offline), and what the server answers is journaled before
// the call returns, so the store's spaces and queries agree with it.
extension SyncEngine {
    /// Creates a shared space named `name` with the user as its only owner,
    /// and returns it. Records are created in it with
    /// ``LocalStore/create(_:id:fields:in:)``.
    ///
    /// ```swift
    /// let list = try await engine.createSpace(named: "Weekend pins")
    /// try await engine.setMember("kid", role: .editor, in: list.id)
    /// ```
    ///
    /// - Throws: ``SyncFailure/transport(_:)`` when the server cannot be
    ///   reached or refuses (``TransportError/spaceRefused(_:)``);
    ///   ``SyncFailure/store(_:)`` when the store cannot keep the answer.
    @discardableResult
    public func createSpace(named name: String) async throws(SyncFailure) -> Space {
        try await describedSpace(after: .create(SpaceID.random(), name: name))
    }

    /// Renames a shared space (owners only) and returns it.
    @discardableResult
    public func renameSpace(_ space: SpaceID, to name: String) async throws(SyncFailure) -> Space {
        try await describedSpace(after: .rename(space, name: name))
    }

    /// Adds `user` to a shared space with `role`, or changes the member's
    /// role (owners only), and returns the space.
    @discardableResult
    public func setMember(_ user: String, role: SpaceRole, in space: SpaceID) async throws(SyncFailure) -> Space {
        try await describedSpace(after: .setMember(space, user: user, role: role))
    }

    /// Removes `user` from a shared space (owners may remove anyone, a member
    /// themselves) and returns the space, or `nil` when the user removed
    /// themselves: then the space leaves this device as after ``leaveSpace(_:)``.
    @discardableResult
    public func removeMember(_ user: String, from space: SpaceID) async throws(SyncFailure) -> Space? {
        try await apply(.removeMember(space, user: user))
    }

    /// Leaves a shared space. Its records leave this device, and edits queued
    /// in it become ``LocalStore/rejections()``. The last owner cannot leave
    /// (``SpaceRefusal/lastOwner(_:)``): delete the space instead.
    public func leaveSpace(_ space: SpaceID) async throws(SyncFailure) {
        _ = try await apply(.leave(space))
    }

    /// Deletes a shared space with all its records, for every member
    /// (owners only). Its records leave this device at once, and every other
    /// member's at their next pull.
    public func deleteSpace(_ space: SpaceID) async throws(SyncFailure) {
        _ = try await apply(.delete(space))
    }

    /// Asks the server for the user's shared spaces and keeps the answer:
    /// new or changed descriptions are journaled, and a space the device holds
    /// that the server no longer lists is lost, as a pull would find.
    @discardableResult
    public func refreshSpaces() async throws(SyncFailure) -> [Space] {
        let listed: [Space]
        do { listed = try await transport.spaces() } catch { throw .transport(error) }
        if let personal = listed.first(where: { $0.id.isPersonal }) {
            throw .malformedReply(.pullPage(reason: "a description of the personal space \(personal.name)"))
        }
        do {
            let held = try await outbox.spaces().map(\.id)
            let gone = Set(held).subtracting(listed.map(\.id))
            try await outbox.applySpaces(described: listed, lost: gone.sorted(by: <))
            noteDescribed(listed)
            if !gone.isEmpty { noteLost(gone) }
        } catch {
            throw .store(error)
        }
        return listed.sorted { $0.id < $1.id }
    }

    /// Sends `change`, which the server answers with the space as it is now.
    private func describedSpace(after change: SpaceChange) async throws(SyncFailure) -> Space {
        guard let space = try await apply(change) else {
            throw .malformedReply(.pullPage(reason: "no space in the reply to \(change)"))
        }
        return space
    }

    /// Sends `change` and journals the answer: the space's new description,
    /// or, when the server answers none (the user left, was removed or
    /// deleted it), the loss of the space.
    private func apply(_ change: SpaceChange) async throws(SyncFailure) -> Space? {
        let answer: Space?
        do { answer = try await transport.change(change) } catch { throw .transport(error) }
        if let answer, answer.id != change.space {
            throw .malformedReply(.pullPage(reason: "the reply to \(change) describes space \(answer.id)"))
        }
        do {
            if let answer {
                try await outbox.applySpaces(described: [answer], lost: [])
                noteDescribed([answer])
            } else {
                try await outbox.applySpaces(described: [], lost: [change.space])
                noteLost([change.space])
            }
        } catch {
            throw .store(error)
        }
        await refreshStatus()
        return answer
    }

    /// The status names `spaces` as lost.
    func noteLost(_ spaces: some Sequence<SpaceID>) {
        statusState.lostSpaces.formUnion(spaces)
    }

    /// The user is a member of `spaces` (again): the status no longer names them lost.
    func noteDescribed(_ spaces: [Space]) {
        guard !statusState.lostSpaces.isEmpty else { return }
        statusState.lostSpaces.subtract(spaces.map(\.id))
    }
}
