import SyncJournalProtocol

/// Members that name shared spaces and their people (journals/PROTOCOL.md,
/// "Spaces"), read as strictly as the rest of a message.
extension JSONObjectReader {
    /// Member `name` as a shared space's id: a UUID in lowercase
    /// `8-4-4-4-12` hex, its only spelling.
    func spaceID(_ name: String) throws(WireError) -> SpaceID {
        try Self.spaceID(try string(name), at: path(of: name))
    }

    /// A member that may be left out (the personal space, which has no id)
    /// and is a shared space's id when given; `null` is refused, so a
    /// message has one spelling of "personal".
    func absentOrSpaceID(_ name: String) throws(WireError) -> SpaceID {
        guard members[name] != nil else { return .personal }
        return try spaceID(name)
    }

    /// Member `name` as a space's name: 1 to ``ProtocolLimits/maximumSpaceNameBytes``
    /// bytes of UTF-8 without U+0000.
    func spaceName(_ name: String) throws(WireError) -> String {
        let text = try self.name(name, maximumBytes: ProtocolLimits.maximumSpaceNameBytes)
        if text.utf8.contains(0) { throw .invalidValue(path: path(of: name), reason: "a space name holds U+0000") }
        return text
    }

    /// Member `name` as a user name: 1 to ``userNameMaximumBytes`` bytes of
    /// UTF-8 without U+0000 (which no backend's text can hold).
    func userName(_ name: String) throws(WireError) -> String {
        let text = try self.name(name, maximumBytes: Self.userNameMaximumBytes)
        if text.utf8.contains(0) { throw .invalidValue(path: path(of: name), reason: "a user name holds U+0000") }
        return text
    }

    /// Member `name` as a role: `owner`, `editor` or `viewer`.
    func role(_ name: String) throws(WireError) -> SpaceRole {
        let text = try string(name)
        guard let role = SpaceRole(rawValue: text) else {
            throw .invalidValue(path: path(of: name), reason: "\"\(text)\" is not owner, editor or viewer")
        }
        return role
    }

    /// The longest user name a membership message carries (`sync-server`
    /// takes user names of at most 128 bytes).
    static let userNameMaximumBytes = 128

    /// `text`, found at `path`, as a shared space's id. An uppercase
    /// spelling of the same UUID is refused: a space is compared by the
    /// bytes of its id, so two spellings would name two spaces.
    static func spaceID(_ text: String, at path: String) throws(WireError) -> SpaceID {
        guard let id = SpaceID(text) else {
            throw .invalidValue(path: path, reason: "\"\(text.prefix(80))\" is not a space id (lowercase 8-4-4-4-12 hex)")
        }
        return id
    }
}
