#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A fresh, empty directory of its own under the system's temporary
/// directory, for one test's journals, databases and tool output.
///
/// Prefer ``withTemporaryDirectory(prefix:isolation:_:)``, which removes the
/// directory when its body returns or throws. A directory made with
/// ``init(prefix:)`` is the caller's to ``remove()``, typically in a `defer`
/// right after it is made; nothing removes it behind the caller's back, so a
/// path handed to another process stays valid until the caller says so.
///
/// ```swift
/// let directory = try TemporaryDirectory()
/// defer { directory.remove() }
/// let store = try await LocalStore.open(path: directory.file("pins.journal"))
/// ```
public struct TemporaryDirectory: Sendable, Hashable {
    /// The directory's absolute path.
    public let path: String

    /// Creates a new, empty directory named `prefix` followed by a random
    /// suffix under the system's temporary directory.
    ///
    /// - Throws: ``TemporaryDirectoryError/cannotCreate(path:reason:)`` when
    ///   the directory cannot be made.
    public init(prefix: String = "syncjournal") throws(TemporaryDirectoryError) {
        let base = FileManager.default.temporaryDirectory.path
        let path = (base.hasSuffix("/") ? base : base + "/") + prefix + "-" + UUID().uuidString.lowercased()
        do {
            // Not intermediate: a name that already exists is an error, so two tests never share one.
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        } catch {
            throw .cannotCreate(path: path, reason: "\(error)")
        }
        self.path = path
    }

    /// The directory as a file URL.
    public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// The path of `name` inside the directory (which need not exist yet).
    ///
    /// ```swift
    /// let journal = directory.file("device-A.journal")
    /// ```
    public func file(_ name: String) -> String { path + "/" + name }

    /// The names of the entries in the directory, sorted.
    ///
    /// - Throws: ``TemporaryDirectoryError/cannotList(path:reason:)`` when
    ///   the directory cannot be read (it was removed, say).
    public func entries() throws(TemporaryDirectoryError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        } catch {
            throw .cannotList(path: path, reason: "\(error)")
        }
    }

    /// Deletes the directory and everything in it. Removing it twice, or a
    /// directory that is already gone, does nothing.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Runs `body` with a fresh ``TemporaryDirectory`` and removes the directory
/// afterwards, whether `body` returns or throws.
///
/// ```swift
/// try await withTemporaryDirectory { directory in
///     let store = try await LocalStore.open(path: directory.file("pins.journal"))
///     try await store.close()
/// }
/// ```
public func withTemporaryDirectory<Result>(
    prefix: String = "syncjournal",
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TemporaryDirectory) async throws -> Result
) async throws -> Result {
    let directory = try TemporaryDirectory(prefix: prefix)
    defer { directory.remove() }
    return try await body(directory)
}
