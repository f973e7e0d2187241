/// Constants of journal format v1 (`journals/FORMAT.md`).
public enum JournalFormat {
    /// `\x89SJRN\r\n\x1a`: the first 8 bytes of every journal.
    public static let magic: [UInt8] = [0x89, 0x53, 0x4A, 0x52, 0x4E, 0x0D, 0x0A, 0x1A]
    /// The major version this code writes and reads.
    public static let majorVersion: UInt16 = 1
    /// The minor version this code writes.
    public static let minorVersion: UInt16 = 0
    /// Size of the v1.0 file header.
    public static let headerLength = 80
    /// Largest header length a reader accepts from a later minor version.
    public static let maximumHeaderLength = 4096
    /// Size of the header in front of every record's payload.
    public static let recordHeaderLength = 28
    /// Largest payload a record may carry (16 MiB).
    public static let maximumPayloadLength = 16 * 1024 * 1024
    /// Largest first sequence number a header may name (2^63 − 1): sequence
    /// numbers then never reach the end of `UInt64`, so counting on from any
    /// record (reading, appending, checkpointing) cannot overflow.
    public static let maximumFirstSequence = UInt64(Int64.max)
}
