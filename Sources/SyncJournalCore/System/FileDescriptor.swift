/// An open file descriptor, as returned by ``SystemCalls/open(_:_:_:)``.
package struct FileDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The kernel's descriptor number.
    package let rawValue: Int32

    /// Wraps a descriptor number.
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// `fd N`.
    package var description: String { "fd \(rawValue)" }
}

/// How ``SystemCalls/open(_:_:_:)`` opens a file.
package struct OpenOptions: OptionSet, Sendable, Hashable {
    /// The bits.
    package let rawValue: Int32
    /// Creates options from bits.
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// Open for reading only.
    package static let readOnly = OpenOptions(rawValue: 1 << 0)
    /// Open for reading and writing.
    package static let readWrite = OpenOptions(rawValue: 1 << 1)
    /// Create the file if it does not exist.
    package static let create = OpenOptions(rawValue: 1 << 2)
    /// With ``create``: fail if the file exists.
    package static let exclusive = OpenOptions(rawValue: 1 << 3)
    /// Truncate the file to zero length.
    package static let truncate = OpenOptions(rawValue: 1 << 4)
    /// Open a directory (for `fsync`ing it).
    package static let directory = OpenOptions(rawValue: 1 << 5)
}
