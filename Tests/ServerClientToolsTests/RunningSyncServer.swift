import Foundation
import SyncJournalPlatform

/// The built `sync-server` on a free port (`--port 0`) with a database in a
/// scratch directory, in development mode (no users): ready once it printed
/// its ready line, never after a sleep.
final class RunningSyncServer {
    let process = Process()
    let url: String
    let readyLine: String

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A server on SQLite, its database at the path `database`.
    convenience init(database: String, arguments: [String] = []) throws {
        try self.init(storage: ["--db", database], arguments: arguments)
    }

    /// A server on PostgreSQL, at the connection string `postgres`.
    convenience init(postgres: String, arguments: [String] = []) throws {
        try self.init(storage: ["--postgres", postgres], arguments: arguments)
    }

    /// A server on the storage `storage` names (`--db PATH` or `--postgres CONNINFO`).
    init(storage: [String], arguments: [String]) throws {
        process.executableURL = BuiltTool.binDirectory.appendingPathComponent("sync-server")
        process.arguments = ["--port", "0"] + storage + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw Failure(description: "sync-server exited before it was ready: \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        readyLine = String(text.prefix { $0 != "\n" })
        // "sync-server listening on http://127.0.0.1:PORT (sqlite PATH) …"
        guard let address = readyLine.split(separator: " ").first(where: { $0.hasPrefix("http://") }) else {
            throw Failure(description: "no address in \(readyLine)")
        }
        url = String(address)
    }

    /// Stops the server (SIGTERM) and waits for it.
    func stop() {
        guard process.isRunning else { return }
        try? SystemProcess.send(.terminate, to: process.processIdentifier)
        process.waitUntilExit()
    }

    deinit { stop() }
}
