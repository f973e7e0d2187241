import Dispatch
import Foundation
import SyncJournalPlatform

/// The fuzz targets, for the regression runner, the libFuzzer entry points
/// and the tests.
package enum FuzzTarget: String, Sendable, CaseIterable {
    /// ``FuzzJournalReader``: any bytes as a journal file.
    case journalReader = "journal-reader"
    /// ``FuzzServerReply``: any bytes as a script of server replies.
    case serverReply = "server-reply"
    /// ``FuzzWireMessages``: any bytes as the JSON body of a protocol message.
    case wireMessages = "wire-messages"

    /// Runs one input through the target, in-process.
    ///
    /// - Throws: ``FuzzFinding`` when an invariant does not hold.
    /// With `trace` (server replies only), each step is described to it.
    ///
    /// - Throws: ``FuzzFinding`` when an invariant does not hold.
    package func run(_ bytes: [UInt8], trace: (@Sendable (String) -> Void)? = nil) async throws(FuzzFinding) {
        switch self {
        case .journalReader: try await FuzzJournalReader.runAll(bytes)
        case .serverReply: try await FuzzServerReply.run(bytes, trace: trace)
        case .wireMessages: try FuzzWireMessages.run(bytes)
        }
    }

    /// Runs one input from a thread outside the Swift concurrency pool (the
    /// libFuzzer callback, a command-line tool), blocking until it ends.
    /// Never call it from async code.
    package func runBlocking(_ bytes: [UInt8], trace: (@Sendable (String) -> Void)? = nil) -> FuzzFinding? {
        let result = Mutex<FuzzFinding?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do throws(FuzzFinding) { try await self.run(bytes, trace: trace) } catch { result.withLock { $0 = error } }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    /// The hand-made seed inputs of the target (the journal reader's seeds
    /// are the journals under `journals/`; it has none of its own).
    package var seeds: [(name: String, bytes: [UInt8])] {
        switch self {
        case .journalReader: return []
        case .serverReply: return FuzzServerReply.seeds
        case .wireMessages: return FuzzWireMessages.seeds
        }
    }

    /// The libFuzzer entry point's body: runs the input and traps with the
    /// finding, so libFuzzer keeps the input as a crash.
    package func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        if let finding = runBlocking(bytes) {
            FileHandle.standardError.write(Data("fuzz finding: \(finding)\n".utf8))
            fatalError("fuzz finding: \(finding)")
        }
        return 0
    }

    /// Writes the seeds into `directory` (created if missing), one file each.
    package func writeSeeds(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for seed in seeds {
            try Data(seed.bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent("seed-\(seed.name)"))
        }
    }
}
