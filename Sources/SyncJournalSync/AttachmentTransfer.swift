import SyncJournalProtocol

/// One attachment on its way to or from the server, as ``SyncStatus/transfers`` shows it.
///
/// ```swift
/// for transfer in status.transfers where transfer.direction == .upload {
///     print("\(transfer.content.hex.prefix(8)): \(Int(transfer.fractionCompleted * 100)) %")
/// }
/// ```
public struct AttachmentTransfer: Sendable, Hashable {
    /// Which way the bytes go.
    public enum Direction: Sendable, Hashable {
        /// From this device to the server, before the edit that refers to them is pushed.
        case upload
        /// From the server to this device (``SyncEngine/download(_:)``).
        case download
    }

    /// The content.
    public var content: ContentHash
    /// Which way its bytes go.
    public var direction: Direction
    /// The content's size in bytes.
    public var size: Int64
    /// Bytes done: for an upload, those the server acknowledged (where a
    /// resumed upload goes on from); for a download, those written here.
    public var completed: Int64

    /// A transfer of `size` bytes of `content`, `completed` of them done.
    public init(content: ContentHash, direction: Direction, size: Int64, completed: Int64) {
        self.content = content
        self.direction = direction
        self.size = size
        self.completed = completed
    }

    /// The share done, from 0 to 1 (1 for the empty content).
    public var fractionCompleted: Double {
        size <= 0 ? 1 : min(1, Double(completed) / Double(size))
    }
}
