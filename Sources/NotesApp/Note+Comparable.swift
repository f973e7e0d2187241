extension Note: Comparable {
    /// Version 2's list order: pinned notes first, then the earlier `created`,
    /// then (notes created in the same millisecond on two devices) the id.
    public static func < (lhs: Note, rhs: Note) -> Bool {
        (lhs.pinned ? 0 : 1, lhs.created, lhs.id) < (rhs.pinned ? 0 : 1, rhs.created, rhs.id)
    }
}

extension NoteVersion1: Comparable {
    /// Version 1's list order: the earlier `created` first; notes created in
    /// the same millisecond (on two devices) in the order of their ids.
    public static func < (lhs: NoteVersion1, rhs: NoteVersion1) -> Bool {
        (lhs.created, lhs.id) < (rhs.created, rhs.id)
    }
}
