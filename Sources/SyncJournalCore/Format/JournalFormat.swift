/// Constants of the journal format (`journals/FORMAT.md`).
package enum JournalFormat {
    /// `\x89SJRN\r\n\x1a`: the first 8 bytes of every journal.
    package static let magic: [UInt8] = [0x89, 0x53, 0x4A, 0x52, 0x4E, 0x0D, 0x0A, 0x1A]
    /// The major version this code writes: format 2, whose record frames
    /// carry a sync horizon.
    package static let majorVersion: UInt16 = 2
    /// The minor version this code writes.
    /// 2.2: every writer closes with a sync horizon record, never leaves a
    /// size a power cut can keep that is not a multiple of the sector size
    /// except at a synced end, so a reader can tell a closed file from a
    /// crashed one (section 3.2 of `journals/FORMAT.md`).
    package static let minorVersion: UInt16 = 2
    /// The first format-2 minor version whose writers keep the closed-end rule.
    package static let closedEndMinorVersion: UInt16 = 2
    /// The major versions this code reads: 1 (read exactly as before, and
    /// continued in its own framing) and 2.
    package static let readableMajorVersions: ClosedRange<UInt16> = 1...2
    /// Size of the file header this code writes (the same 80 bytes in 1.x and 2.0).
    package static let headerLength = 80
    /// Largest header length a reader accepts from a later minor version.
    package static let maximumHeaderLength = 4096
    /// Size of the header in front of every record's payload in format 2.
    package static let recordHeaderLength = 40
    /// Size of the header in front of every record's payload in format 1.x.
    package static let version1RecordHeaderLength = 28
    /// Largest payload a record may carry (16 MiB).
    package static let maximumPayloadLength = 16 * 1024 * 1024
    /// Largest first sequence number a header may name (2^63 − 1): sequence
    /// numbers then never reach the end of `UInt64`, so counting on from any
    /// record (reading, appending, checkpointing) cannot overflow.
    package static let maximumFirstSequence = UInt64(Int64.max)
    /// The unit a disk writes atomically, and the granularity of the fault
    /// model recovery is designed for: after a power cut each sector of an
    /// append holds either all of its new bytes or all of its old ones.
    package static let sectorSize = 512
    /// The in-flight limit a format-2 writer declares unless told otherwise:
    /// it never has more bytes than this written past the durable end.
    package static let defaultInFlightLimit: UInt32 = 64 << 20
    /// The smallest in-flight limit a header may declare: one largest record
    /// plus one bulk buffer always fit.
    package static let minimumInFlightLimit: UInt32 = 32 << 20

    /// The record header length of a major version.
    package static func recordHeaderLength(major: UInt16) -> Int {
        major == 1 ? version1RecordHeaderLength : recordHeaderLength
    }
}
