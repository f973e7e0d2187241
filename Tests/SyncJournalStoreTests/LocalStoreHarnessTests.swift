import Dispatch
import Foundation
import SyncJournalPlatform
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

// Shared fixtures of the LocalStore*Tests and Compactor*Tests files (the
// store's rules). Everything lives under `StoreRulesKit` so that it cannot
// collide with helpers other test files of this target declare.

enum StoreRulesKit {
    /// The time every fixed clock reports; it must never show up as a base.
    static let clockTime: Int64 = 4_242_424_242

    /// A test's own directory; its journal is ``TemporaryDirectory/journal``.
    typealias Scratch = TemporaryDirectory

    /// Runs `body` with a fresh scratch directory, removed afterwards whether
    /// `body` returns or throws.
    static func withScratch<T>(isolation: isolated (any Actor)? = #isolation,
                              _ body: (Scratch) async throws -> T) async throws -> T {
        try await withTemporaryDirectory(prefix: "store-rules", isolation: isolation, body)
    }

    /// Options with a fixed clock and automatic checkpoints off (so record
    /// counts in the journal only change when the test writes).
    static func options(system: any SystemCalls = PosixSystemCalls(),
                        makeRecordID: (@Sendable () -> String)? = nil) -> LocalStore.Options {
        if let makeRecordID {
            return LocalStore.Options(system: system, clock: StillClock(milliseconds: clockTime), upkeep: .off, makeRecordID: makeRecordID)
        }
        return LocalStore.Options(system: system, clock: StillClock(milliseconds: clockTime), upkeep: .off)
    }

    static func open(_ path: String, system: any SystemCalls = PosixSystemCalls()) async throws -> LocalStore {
        try await LocalStore.open(path: path, options: options(system: system))
    }

    /// A server row of kind `pin` (or `kind`).
    static func row(_ id: String, at updatedAt: Int64, _ fields: [String: FieldValue] = [:], kind: String = "pin",
                    deletedAt: Int64? = nil) -> ServerRow {
        ServerRow(kind: kind, id: id, fields: fields, updatedAt: updatedAt, deletedAt: deletedAt)
    }

    /// A tombstone row.
    static func tombstone(_ id: String, at updatedAt: Int64, kind: String = "pin") -> ServerRow {
        ServerRow(kind: kind, id: id, fields: [:], updatedAt: updatedAt, deletedAt: updatedAt)
    }

    /// The error `body` throws, or `nil` when it returns. A non-store error is recorded as an issue.
    static func storeError(sourceLocation: SourceLocation = #_sourceLocation,
                           _ body: () async throws -> Void) async -> StoreError? {
        do {
            try await body()
            return nil
        } catch let error as StoreError {
            return error
        } catch {
            Issue.record("expected a StoreError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// The verified records of the journal at `path`.
    static func records(_ path: String) throws -> [JournalRecord] {
        try JournalReader(path: path).readAll().records
    }

    /// The number of verified records in the journal at `path`.
    static func recordCount(_ path: String) throws -> Int {
        try JournalReader(path: path).scan().recordCount
    }

    /// The file's bytes.
    static func bytes(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    /// The journal's content: the file's bytes up to the end of its last
    /// record, without the zeros a writer preallocates after it (those are
    /// free space, overwritten by the next append or cut on close).
    static func journalContent(_ path: String) -> [UInt8]? {
        guard let bytes = bytes(path) else { return nil }
        guard let report = try? JournalReader(path: path).scan(), report.status == .clean else { return bytes }
        return Array(bytes.prefix(Int(report.validBytes)))
    }

    static func copySample(_ name: String, to destination: String) throws {
        let source = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("journals/samples/\(name)").path
        try FileManager.default.copyItem(atPath: source, toPath: destination)
    }
}

extension StoreError {
    /// The case's name (`journal.io`, `journal.writerFailed`, `journal.locked` for the
    /// journal's own errors), to check the case without its explanatory strings.
    var caseName: String {
        switch self {
        case .emptyKind: return "emptyKind"
        case .invalidKind: return "invalidKind"
        case .invalidRecordID: return "invalidRecordID"
        case .invalidFields: return "invalidFields"
        case .invalidModelVersion: return "invalidModelVersion"
        case .recordNotFound: return "recordNotFound"
        case .recordAlreadyExists: return "recordAlreadyExists"
        case .invalidServerData: return "invalidServerData"
        case .tooLarge: return "tooLarge"
        case .unreadable: return "unreadable"
        case .retired: return "retired"
        case .closed: return "closed"
        case .readOnly: return "readOnly"
        case .suspended: return "suspended"
        case .notQuarantined: return "notQuarantined"
        case .conflictNotFound: return "conflictNotFound"
        case .noSuchSpace: return "noSuchSpace"
        case .readOnlySpace: return "readOnlySpace"
        case .attachmentFile: return "attachmentFile"
        case .attachmentDamaged: return "attachmentDamaged"
        case .attachmentMissing: return "attachmentMissing"
        case .invalidAttachment: return "invalidAttachment"
        case .cannotOpen(_, let cause): return "cannotOpen." + StoreError.journal(cause).caseName.dropFirst("journal.".count)
        case .journal(let error):
            switch error {
            case .io: return "journal.io"
            case .notAJournal: return "journal.notAJournal"
            case .unsupportedVersion: return "journal.unsupportedVersion"
            case .corrupt: return "journal.corrupt"
            case .unsupported: return "journal.unsupported"
            case .locked: return "journal.locked"
            case .writerFailed: return "journal.writerFailed"
            case .closed: return "journal.closed"
            case .recordTooLarge: return "journal.recordTooLarge"
            case .alreadyExists: return "journal.alreadyExists"
            case .missingBesideCheckpoint: return "journal.missingBesideCheckpoint"
            }
        }
    }
}

/// A clock that reports ``StoreRulesKit/clockTime`` and signals every
/// reading. The store reads the clock on its actor right before it queues an
/// edit for the journal, with no suspension in between, so a reading tells
/// the test that the edit is queued.
final class StoreRulesSignallingClock: WallTimeTestClock, Sendable {
    private let readings: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let count = Mutex(0)

    init() { (readings, continuation) = AsyncStream.makeStream(of: Void.self) }

    func wallTimeMilliseconds() -> Int64 {
        count.withLock { $0 += 1 }
        continuation.yield()
        return StoreRulesKit.clockTime
    }

    /// Readings so far.
    var calls: Int { count.withLock { $0 } }

    /// Returns once the clock has been read at least `n` times in all.
    func waitUntilRead(times n: Int) async {
        if calls >= n { return }
        for await _ in readings where calls >= n { return }
    }
}

extension TemporaryDirectory {
    /// The store's journal in this directory.
    var journal: String { file("store.journal") }
}
