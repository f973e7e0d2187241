/// The statements a storage runs inside one write transaction to change
/// shared spaces and their members. ``SpaceRules`` decides with them, so
/// every server applies the membership rules of journals/PROTOCOL.md
/// ("Membership") alike.
package protocol MembershipQueries {
    /// How this storage's statements fail.
    associatedtype Failure: Error

    /// `user`'s standing in `space`, `nil` when not a member (or no such space).
    func standing(of user: String, in space: SpaceID) throws(Failure) -> SpaceStanding?
    /// The name of `space` and whether `user` owns it, `nil` when there is no such space.
    func existingSpace(_ space: SpaceID, owner user: String) throws(Failure) -> (name: String, ownedByUser: Bool)?
    /// The members of `space`, in any order.
    func members(of space: SpaceID) throws(Failure) -> [SpaceMember]
    /// How many shared spaces `user` is a member of.
    func membershipCount(of user: String) throws(Failure) -> Int
    /// Makes `space` with `owner` as its only member, `version` as its version and last stamp.
    func insertSpace(_ space: SpaceID, name: String, owner: String, version: Int64) throws(Failure)
    /// Sets the name and version of `space`.
    func updateSpace(_ space: SpaceID, name: String, version: Int64) throws(Failure)
    /// Adds `user` to `space` with `role`, or gives the member `role`.
    func setMember(_ space: SpaceID, user: String, role: SpaceRole) throws(Failure)
    /// Removes `user` from `space`.
    func removeMember(_ space: SpaceID, user: String) throws(Failure)
    /// Removes `space`, its members, its rows and its horizons.
    func deleteSpace(_ space: SpaceID) throws(Failure)
    /// The stamp of a change to `space` (see ``StorageQueries/nextStamp(after:in:)``).
    func nextStamp(after previous: Int64?, in space: SpaceID) throws(Failure) -> Int64
    /// How this storage reports a refused membership change.
    static func failure(_ refusal: SpaceRefusal) -> Failure
}
