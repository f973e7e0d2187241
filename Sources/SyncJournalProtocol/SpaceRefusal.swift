/// Why a server refused a membership request (journals/PROTOCOL.md,
/// "Membership"). Each is final: sending the same request again gets the
/// same answer until the spaces change.
///
/// ```swift
/// if case .spaceRefused(.lastOwner) = error { print("make someone else an owner first") }
/// ```
public enum SpaceRefusal: Sendable, Hashable, CustomStringConvertible {
    /// The caller is not a member of the space, or it does not exist (the
    /// server never says which). HTTP 404 `no_such_space`.
    case noSuchSpace(SpaceID)
    /// The caller's role does not allow the request. HTTP 403 `forbidden`.
    case forbidden(SpaceID, role: SpaceRole)
    /// A create named an id that is taken. HTTP 409 `space_exists`.
    case spaceExists(SpaceID)
    /// The space would be left without an owner. HTTP 409 `last_owner`.
    case lastOwner(SpaceID)
    /// The server knows no such user. HTTP 404 `unknown_user`.
    case unknownUser(String)
    /// A space or a user is at its limit of members or spaces. HTTP 409 `too_many`.
    case tooMany(reason: String)

    /// What was refused, in words.
    public var description: String {
        switch self {
        case .noSuchSpace(let id): return "no such space \(id)"
        case .forbidden(let id, let role): return "a \(role) of space \(id) may not do that"
        case .spaceExists(let id): return "space \(id) exists"
        case .lastOwner(let id): return "space \(id) would have no owner"
        case .unknownUser(let user): return "no user \"\(user)\""
        case .tooMany(let reason): return reason
        }
    }
}
