/// Why bytes are not a usable header.
public enum JournalHeaderProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The magic bytes differ: this is not a journal.
    case badMagic
    /// The right magic but a major version this reader does not know.
    case unsupportedVersion(major: UInt16, minor: UInt16)
    /// The file ends inside the header.
    case truncated(length: Int)
    /// The header checksum does not match.
    case checksumMismatch
    /// A field holds a value the format forbids.
    case invalidField(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .badMagic: return "bad magic: not a SyncJournal file"
        case .unsupportedVersion(let major, let minor): return "format version \(major).\(minor) is not supported (this reader knows major versions 1 and 2)"
        case .truncated(let length): return "file ends inside the header (\(length) bytes)"
        case .checksumMismatch: return "header checksum mismatch"
        case .invalidField(let what): return "invalid header: \(what)"
        }
    }
}
