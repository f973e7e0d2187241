/// Why a server refused a mutation for its shared space, in the exact words
/// of a `rejected` result's reason (journals/PROTOCOL.md, "Membership"):
/// the one place servers word it and clients recognise it.
///
/// ```swift
/// if SpaceWriteRefusal(reason: result.reason, space: mutation.space) != nil { print("not yours to change") }
/// ```
package enum SpaceWriteRefusal: Sendable, Hashable {
    /// The user is not a member of the space, or it does not exist: the same words for both.
    case noAccess(SpaceID)
    /// The user is a viewer of the space.
    case readOnly(SpaceID)

    /// The reason a `rejected` result carries.
    package var reason: String {
        switch self {
        case .noAccess(let space): return "no access to space \(space)"
        case .readOnly(let space): return "read only: a viewer of space \(space)"
        }
    }

    /// The refusal `reason` words for `space`, or `nil` when it is another
    /// reason (or `space` is the personal space, which is never refused).
    package init?(reason: String, space: SpaceID) {
        guard !space.isPersonal else { return nil }
        if reason == Self.noAccess(space).reason {
            self = .noAccess(space)
        } else if reason == Self.readOnly(space).reason {
            self = .readOnly(space)
        } else {
            return nil
        }
    }

    /// The rejected outcome a server answers with.
    package var outcome: MutationOutcome { .rejected(reason: reason, permanent: true) }
}
