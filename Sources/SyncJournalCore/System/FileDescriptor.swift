import SyncJournalPlatform

/// An open file descriptor, as returned by ``SystemCalls/open(_:_:_:)``.
package struct FileDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The kernel's descriptor number.
    package let rawValue: Int32

    /// Wraps a descriptor number.
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// `fd N`.
    package var description: String { "fd \(rawValue)" }
}

/// How ``SystemCalls/open(_:_:_:)`` opens a file: the platform layer's
/// flags, so the real calls pass them on unchanged.
package typealias OpenOptions = FileOpenFlags
