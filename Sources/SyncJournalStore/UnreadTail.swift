import SyncJournalCore

/// The damaged end of a journal that a read-only store read up to and left
/// as it was (a store open for writing would cut it off and keep the bytes in
/// a side file).
///
/// A journal another process is writing can show one for a moment (an
/// append caught half-written), as can a copy taken while an app ran.
///
/// ```swift
/// var options = LocalStore.Options()
/// options.readOnly = true
/// let backup = try await LocalStore.open(path: "backups/pins.journal", options: options)
/// if let tail = await backup.unreadTail {
///     print("read up to byte \(tail.offset); \(tail.bytes) bytes after it were left unread")
/// }
/// ```
public struct UnreadTail: Sendable, Hashable, CustomStringConvertible {
    /// Where the damage starts: the end of the last valid record.
    public var offset: Int64
    /// The bytes from ``offset`` to the end of the file.
    public var bytes: Int64
    /// What was found at ``offset``.
    public var damage: JournalDamage

    /// A tail of `bytes` bytes at `offset`, damaged by `damage`.
    public init(offset: Int64, bytes: Int64, damage: JournalDamage) {
        self.offset = offset
        self.bytes = bytes
        self.damage = damage
    }

    /// The torn tail a scan reported, if it reported one.
    package init?(_ report: JournalScanReport) {
        guard case .tornTail(let offset, let damage) = report.status else { return nil }
        self.init(offset: offset, bytes: max(0, report.fileBytes - offset), damage: damage)
    }

    /// One line, such as `torn tail at byte 4096 (12 bytes): ...`.
    public var description: String { "torn tail at byte \(offset) (\(bytes) bytes): \(damage)" }
}
