import Foundation
import SyncJournal
import SyncJournalCommandLine

/// `notes watch`: keeps the engine running, pulls from the server every
/// interval, and prints the list each time it changes, until asked to stop.
///
/// The engine syncs by itself after each local edit. Rather than the
/// engine's idle pulls, the app polls, so that it sees every outcome and can
/// report it: it calls ``SyncEngine/sync()`` once at the start and then
/// every ``interval`` seconds.
struct NotesWatch: Sendable {
    /// The device's notes.
    var repository: NotesRepository
    /// The engine syncing them with the server.
    var engine: SyncEngine
    /// The server, for messages.
    var server: URL
    /// Whether each listing is one JSON array on one line.
    var json: Bool
    /// Seconds between pulls.
    var interval: Double
    /// Where listings (standard output) and sync problems (standard error) go.
    var output: ToolOutput

    /// How a watch ended.
    private enum End: Sendable {
        /// A stop was requested (or the store closed).
        case stopped
        /// Reading the notes failed.
        case failed(NotesError)
    }

    /// Runs until `stopRequests` yields or ends.
    func run(until stopRequests: AsyncStream<Void>) async throws(NotesError) {
        await engine.start()
        let end = await withTaskGroup(of: End.self) { group -> End in
            group.addTask { await printListings() }
            group.addTask { await poll() }
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
                listing = NotesListing.render(try await repository.snapshot(of: TypedRecords(decoding: records)), json: json)
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

    /// Syncs now and every interval; says on standard error when the server
    /// cannot be reached, and when it can again.
    private func poll() async -> End {
        var problem: String?
        while !Task.isCancelled {
            let outcome = await engine.sync()
            do throws(NotesError) {
                try NotesSyncReport.check(outcome, server: server)
                if problem != nil { output.error("notes: in sync with \(server.absoluteString) again\n") }
                problem = nil
            } catch {
                if problem != error.description { output.error("notes: \(error)\n") }
                problem = error.description
            }
            do {
                try await Task.sleep(for: .milliseconds(Int64(interval * 1000)))
            } catch {
                break
            }
        }
        return .stopped
    }
}
