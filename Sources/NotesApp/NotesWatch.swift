import Foundation
import SyncJournal
import SyncJournalCommandLine

/// `notes watch`: runs the sync engine and prints the list each time it
/// changes, until asked to stop.
///
/// The watch does not sync by itself: it starts the engine, which pushes
/// after local edits, pulls when the server announces changes (a wait for
/// changes, where the transport supports one), and pulls while idle at the
/// engine's idle pull interval (for a server that does not announce them).
/// The list on standard output follows the list query
/// (``NotesRepository/observeList()``), so a note another device added
/// appears as soon as the engine pulls it. The engine's status
/// (``SyncEngine/statusUpdates()``) becomes one line on standard error each
/// time the server stops answering, refuses the token, or answers again.
struct NotesWatch: Sendable {
    /// The device's notes.
    var repository: NotesRepository
    /// The engine syncing them with the server, not yet started.
    var engine: SyncEngine
    /// The server's name in messages.
    var server: String
    /// Whether each listing is one JSON array on one line.
    var json: Bool
    /// Where listings (standard output) and status lines (standard error) go.
    var output: ToolOutput

    /// How a watch ended.
    private enum End: Sendable {
        /// A stop was requested (or the store closed).
        case stopped
        /// Reading the notes failed.
        case failed(NotesError)
    }

    /// Starts the engine and runs until `stopRequests` yields or ends; stops the engine before it returns.
    func run(until stopRequests: AsyncStream<Void>) async throws(NotesError) {
        // Subscribed before the start, so the first trouble is not missed.
        let statuses = await engine.statusUpdates()
        await engine.start()
        let end = await withTaskGroup(of: End.self) { group -> End in
            group.addTask { await printListings() }
            group.addTask { await printStatusChanges(statuses) }
            group.addTask {
                for await _ in stopRequests { break }
                return .stopped
            }
            let first = await group.next() ?? .stopped
            group.cancelAll()
            return first
        }
        await engine.stop()
        if case .failed(let error) = end { throw error }
    }

    /// Prints the list as the observation hands it over (now, then after
    /// each change), when it differs from the last one printed.
    private func printListings() async -> End {
        var shown = ""
        for await records in repository.observeList() {
            let listing: String
            do throws(NotesError) {
                listing = NotesListing.render(try await repository.snapshot(of: records), json: json)
            } catch {
                return Task.isCancelled ? .stopped : .failed(error)
            }
            if listing != shown {
                output.standard(json ? listing : listing + "\n")
                shown = listing
            }
        }
        return .stopped
    }

    /// Says on standard error when the server stops answering (or refuses
    /// the token, or fails a sync), once per distinct problem, and when a
    /// sync succeeds again after one.
    private func printStatusChanges(_ statuses: AsyncStream<SyncStatus>) async -> End {
        var problem: String?
        for await status in statuses {
            let now = NotesStatusReport.problem(status.connectivity, server: server)
            if let now, now != problem {
                output.error("notes: \(now)\n")
            } else if now == nil, problem != nil {
                output.error("notes: in sync with \(server) again\n")
            }
            problem = now
        }
        return .stopped
    }
}
