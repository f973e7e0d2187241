import Foundation
import SyncJournalPlatform

/// A directory of its own under `/tmp` for one test, removed when the test ends.
struct TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    let path: String

    /// Creates a fresh directory with `mkdtemp`.
    init() throws {
        path = try SystemPath.makeTemporaryDirectory(template: "/tmp/syncjournal-core-tests-XXXXXX")
    }

    /// The path of `name` inside the directory.
    func file(_ name: String) -> String { path + "/" + name }

    /// The names of the files in the directory.
    func entries() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }

    /// Deletes the directory and everything in it.
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs `body` with a fresh temporary directory and removes it afterwards,
/// whether `body` returns or throws.
func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
}
