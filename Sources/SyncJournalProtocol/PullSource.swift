/// One space a pull reads rows from: the space, the owner its rows are held
/// under (``StorageRules/owner(in:user:)``) and the cursor per kind.
package struct PullSource: Sendable, Hashable {
    /// The space.
    package var space: SpaceID
    /// The owner column of its rows: the user in the personal space, empty in a shared one.
    package var owner: String
    /// Per kind pulled, where the device stopped (`nil`: from the start).
    package var cursors: [String: PullCursor?]

    /// A space to read.
    package init(space: SpaceID, owner: String, cursors: [String: PullCursor?]) {
        self.space = space
        self.owner = owner
        self.cursors = cursors
    }
}
