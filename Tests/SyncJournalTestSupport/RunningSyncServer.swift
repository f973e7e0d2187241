import Foundation
import SyncJournalPlatform

/// The built `sync-server` as a child process: ready once it printed its
/// ready line, never after a sleep.
package final class RunningSyncServer {
    package let process = ChildProcess()
    /// The first line it printed: "sync-server listening on http://127.0.0.1:PORT (sqlite PATH) …".
    package let readyLine: String
    /// The address it listens on, "http://127.0.0.1:PORT".
    package let url: String
    /// The port it listens on (the one it chose, with `--port 0`).
    package let port: Int

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// A server on SQLite on a free port, its database at the path `database`.
    package convenience init(database: String, arguments: [String] = []) throws {
        try self.init(["--port", "0", "--db", database] + arguments)
    }

    /// A server on PostgreSQL on a free port, at the connection string `postgres`.
    package convenience init(postgres: String, arguments: [String] = []) throws {
        try self.init(["--port", "0", "--postgres", postgres] + arguments)
    }

    /// Starts `sync-server` with `arguments` and waits for its ready line.
    package init(_ arguments: [String]) throws {
        process.executableURL = BuiltTool.url(of: "sync-server")
        process.arguments = arguments
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
        guard let address = readyLine.split(separator: " ").first(where: { $0.hasPrefix("http://") }),
              let portText = address.split(separator: ":").last, let port = Int(portText) else {
            throw Failure(description: "no address in \(readyLine)")
        }
        url = String(address)
        self.port = port
    }

    /// Sends `signal` (SIGTERM unless told) and waits for the server to end; returns its termination status.
    @discardableResult
    package func stop(_ signal: SystemProcess.Signal = .terminate) -> Int32 {
        if process.isRunning { try? SystemProcess.send(signal, to: process.processIdentifier) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    // A test that is over has no use for a clean shutdown, and a kill cannot hang.
    deinit {
        if process.isRunning { stop(.kill) }
    }
}
