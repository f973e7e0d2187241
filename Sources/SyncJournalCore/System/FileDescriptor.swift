/// An open file descriptor, as returned by ``SystemCalls/open(_:_:_:)``.
public struct FileDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The kernel's descriptor number.
    public let rawValue: Int32

    /// Wraps a descriptor number.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `fd N`.
    public var description: String { "fd \(rawValue)" }
}

/// How ``SystemCalls/open(_:_:_:)`` opens a file.
public struct OpenOptions: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: Int32
    /// Creates options from bits.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Open for reading only.
    public static let readOnly = OpenOptions(rawValue: 1 << 0)
    /// Open for reading and writing.
    public static let readWrite = OpenOptions(rawValue: 1 << 1)
    /// Create the file if it does not exist.
    public static let create = OpenOptions(rawValue: 1 << 2)
    /// With ``create``: fail if the file exists.
    public static let exclusive = OpenOptions(rawValue: 1 << 3)
    /// Truncate the file to zero length.
    public static let truncate = OpenOptions(rawValue: 1 << 4)
    /// Open a directory (for `fsync`ing it).
    public static let directory = OpenOptions(rawValue: 1 << 5)
}
