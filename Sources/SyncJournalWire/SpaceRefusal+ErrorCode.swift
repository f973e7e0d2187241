import SyncJournalProtocol

/// How a membership refusal travels (journals/PROTOCOL.md, "Membership").
extension SpaceRefusal {
    /// The protocol's `error` code for the refusal.
    ///
    /// ```swift
    /// SpaceRefusal.lastOwner(id).errorCode   // last_owner
    /// ```
    public var errorCode: ProtocolErrorCode {
        switch self {
        case .noSuchSpace: return .noSuchSpace
        case .forbidden: return .forbidden
        case .spaceExists: return .spaceExists
        case .lastOwner: return .lastOwner
        case .unknownUser: return .unknownUser
        case .tooMany: return .tooMany
        }
    }

    /// The HTTP status a server answers the refusal with: 404 for a space or
    /// user it will not name, 403 for a role that does not allow the
    /// request, 409 for a conflict with the spaces as they are.
    ///
    /// ```swift
    /// SpaceRefusal.forbidden(id, role: .viewer).httpStatus   // 403
    /// ```
    public var httpStatus: Int {
        switch self {
        case .noSuchSpace, .unknownUser: return 404
        case .forbidden: return 403
        case .spaceExists, .lastOwner, .tooMany: return 409
        }
    }
}
