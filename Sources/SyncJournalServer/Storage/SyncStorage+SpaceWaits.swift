import SyncJournalProtocol

extension SyncStorage {
    /// Whether a pull of `user` with these cursors and `spaces` would bring
    /// anything (journals/PROTOCOL.md, "Pull across spaces", "Waiting"): a
    /// row of one of the kinds in any space of the user, a newer or new
    /// space description, or a named space lost. A cursor behind purged
    /// tombstones counts too: the pull hears of it (410). What a wait over
    /// spaces looks at before it parks, one pull of one row at a time,
    /// at most ``ProtocolLimits/maximumKindsPerPull`` kinds in each.
    ///
    /// ```swift
    /// if try storage.hasChanges(user: "kid", after: ["pin": cursor], spaces: held) { answerChanged() }
    /// ```
    package func hasChanges(user: String, after cursors: [String: PullCursor?], spaces: [SpaceID: SpaceCursors]) throws(StorageError) -> Bool {
        let kinds = cursors.keys.sorted()
        var start = 0
        repeat {
            let part = Set(kinds[start..<min(start + ProtocolLimits.maximumKindsPerPull, kinds.count)])
            var partCursors: [String: PullCursor?] = [:]
            // updateValue: a subscript assignment of a nil cursor would drop the kind.
            for kind in part { partCursors.updateValue(cursors[kind] ?? nil, forKey: kind) }
            let held = spaces.mapValues { SpaceCursors(version: $0.version, cursors: $0.cursors.filter { part.contains($0.key) }) }
            do {
                let page = try pull(user: user, PullRequest(cursors: partCursors, limit: 1, spaces: held))
                if !page.rows.isEmpty || !page.spaces.isEmpty || !page.lostSpaces.isEmpty { return true }
            } catch {
                if case .cursorExpired = error { return true }
                throw error
            }
            start += ProtocolLimits.maximumKindsPerPull
        } while start < kinds.count
        return false
    }

    /// The shared spaces a wait of `user` follows: those `user` is a member
    /// of now and those the wait names (a space lost since is still told).
    ///
    /// ```swift
    /// registry.register(id, user: user, cursors: cursors, spaces: try storage.followedSpaces(user: user, named: held), handle: handle)
    /// ```
    package func followedSpaces(user: String, named: [SpaceID: SpaceCursors]) throws(StorageError) -> Set<SpaceID> {
        Set(try spaces(user: user).map(\.id)).union(named.keys)
    }
}
