/// The sizes the sync protocol allows, the same for the client, the wire and
/// every server (`journals/PROTOCOL.md`).
///
/// ```swift
/// let fits = id.utf8.count <= ProtocolLimits.maximumRecordIDBytes
/// ```
public enum ProtocolLimits {
    /// The longest record id (and so the longest cursor id), in UTF-8 bytes:
    /// short enough for a database key, long enough for a UUID with a prefix.
    public static let maximumRecordIDBytes = 64

    /// The most rows one pull may ask for: large enough that a first sync
    /// takes few round trips, small enough that one page fits in memory.
    public static let maximumPullLimit = 10_000
}
