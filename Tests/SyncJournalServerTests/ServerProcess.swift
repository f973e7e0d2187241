import Foundation
import SyncJournalPlatform

/// The built `sync-server` binary run as a child process.
final class ServerProcess {
    let process = Process()
    let port: Int
    let readyLine: String

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The directory holding the built products (the test binary runs from it or below it).
    static let binDirectory: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("sync-server").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }()

    /// Starts `sync-server` with `arguments` and waits for its ready line (not for a time).
    init(_ arguments: [String]) throws {
        process.executableURL = Self.binDirectory.appendingPathComponent("sync-server")
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
        // "sync-server listening on http://127.0.0.1:PORT (sqlite PATH)"
        guard let address = readyLine.split(separator: " ").first(where: { $0.hasPrefix("http://") }),
              let portText = address.split(separator: ":").last, let port = Int(portText) else {
            throw Failure(description: "no port in \(readyLine)")
        }
        self.port = port
    }

    /// Sends `signal` and waits for the process to end; returns its termination status.
    @discardableResult
    func stop(_ signal: SystemProcess.Signal) -> Int32 {
        try? SystemProcess.send(signal, to: process.processIdentifier)
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { stop(.kill) }
    }
}
