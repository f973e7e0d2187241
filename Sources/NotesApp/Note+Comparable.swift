extension Note: Comparable {
    /// Creation order: the earlier `created` first; notes created in the same
    /// millisecond (on two devices) in the order of their ids.
    public static func < (lhs: Note, rhs: Note) -> Bool {
        (lhs.created, lhs.id) < (rhs.created, rhs.id)
    }
}
