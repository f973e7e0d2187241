import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A directory of its own under `/tmp` for one test, removed when the test ends.
struct TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    let path: String

    /// Creates a fresh directory with `mkdtemp`.
    init() throws {
        var template = Array("/tmp/syncjournal-core-tests-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        guard made != nil else { throw CocoaError(.fileWriteUnknown) }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
