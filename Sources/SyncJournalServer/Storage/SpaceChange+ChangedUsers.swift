import SyncJournalProtocol

extension SpaceChange {
    /// The users whose own membership this change, sent by `user`, changes:
    /// those a wait registry must wake besides the space's followers (a
    /// member just added follows nothing of the space yet).
    package func changedUsers(by user: String) -> Set<String> {
        switch self {
        case .create, .leave: return [user]
        case .setMember(_, let member, _), .removeMember(_, let member): return [member]
        case .rename, .delete: return []
        }
    }
}
