import SyncJournalProtocol

/// The body of a refused membership request (journals/PROTOCOL.md, "Membership").
extension ErrorBody {
    /// The body a server answers `refusal` with (status ``SpaceRefusal/httpStatus``):
    /// its code, and the space, role or user it is about.
    ///
    /// ```swift
    /// let body = ErrorBodyCodec.encode(ErrorBody(refusal: .lastOwner(id)))   // 409 last_owner
    /// ```
    public init(refusal: SpaceRefusal) {
        let message = refusal.description
        switch refusal {
        case .noSuchSpace(let id): self.init(code: .noSuchSpace, message: message, space: id)
        case .forbidden(let id, let role): self.init(code: .forbidden, message: message, space: id, role: role)
        case .spaceExists(let id): self.init(code: .spaceExists, message: message, space: id)
        case .lastOwner(let id): self.init(code: .lastOwner, message: message, space: id)
        case .unknownUser(let user): self.init(code: .unknownUser, message: message, user: user)
        case .tooMany(let reason): self.init(code: .tooMany, message: reason)
        }
    }

    /// The refusal a body stands for, or `nil` when its code is not one of
    /// a membership refusal, or its members do not say what the code needs
    /// (a malformed reply): the space for `no_such_space`, `space_exists`
    /// and `last_owner`, the space and role for `forbidden`, the user for
    /// `unknown_user`. A `too_many` keeps its message as the reason.
    ///
    /// ```swift
    /// if let refusal = try ErrorBodyCodec.decode(body).refusal { throw TransportError.spaceRefused(refusal) }
    /// ```
    public var refusal: SpaceRefusal? {
        switch code {
        case .noSuchSpace: return space.map(SpaceRefusal.noSuchSpace)
        case .forbidden:
            guard let space, let role else { return nil }
            return .forbidden(space, role: role)
        case .spaceExists: return space.map(SpaceRefusal.spaceExists)
        case .lastOwner: return space.map(SpaceRefusal.lastOwner)
        case .unknownUser: return user.map(SpaceRefusal.unknownUser)
        case .tooMany: return .tooMany(reason: message)
        default: return nil
        }
    }
}
