/// What a device holds of one shared space when it pulls: the version of
/// the space's description and a cursor per kind (journals/PROTOCOL.md,
/// "Pull across spaces").
///
/// ```swift
/// let held = SpaceCursors(version: space.version, cursors: ["pin": cursor])
/// ```
public struct SpaceCursors: Sendable, Hashable {
    /// The ``Space/version`` of the description the device holds, `nil` for none.
    public var version: Int64?
    /// Per kind, the last row pulled; a kind left out is pulled from the start.
    public var cursors: [String: PullCursor?]

    /// What a device holds of a space.
    public init(version: Int64?, cursors: [String: PullCursor?]) {
        self.version = version
        self.cursors = cursors
    }
}
