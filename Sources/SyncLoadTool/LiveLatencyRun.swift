import Foundation
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync

/// `sync-load --live-latency N`: two devices of one user against a running
/// sync-server, each a `LocalStore` in a temporary directory with a
/// `SyncEngine` over `HTTPTransport`. Device B is started with waits for
/// changes and no idle pulls, and observes a query; device A is started
/// and makes N edits one at a time, each awaited in B's observed query
/// before the next. Each latency runs from A's edit call to B's
/// observation. The kind is one of the run's own, so earlier runs' rows do
/// not count.
///
/// ```swift
/// var configuration = LoadConfiguration(server: URL(string: "http://127.0.0.1:8787")!)
/// configuration.liveLatencyEdits = 20
/// let report = try await LiveLatencyRun.run(configuration)
/// ```
public enum LiveLatencyRun {
    /// Runs the two devices and returns the latencies.
    ///
    /// - Throws: ``LoadFailure`` when the server cannot be reached, refuses
    ///   the token, or an edit does not reach device B within the request timeout.
    public static func run(_ configuration: LoadConfiguration) async throws(LoadFailure) -> LiveLatencyReport {
        let server = configuration.server.absoluteString
        let edits = configuration.liveLatencyEdits ?? 0
        let timeout = Duration.milliseconds(Int64(configuration.timeoutSeconds * 1_000))
        let probe = HTTPTransport(baseURL: configuration.server, token: configuration.token, timeout: timeout)
        do { try await probe.checkHealth() } catch { throw .unreachable(server: server, reason: "\(error)") }
        let kind = "live-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-load-\(kind)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .liveSync(server: server, reason: "cannot make a temporary directory: \(error)")
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            return try await measure(configuration, kind: kind, edits: edits, directory: directory, timeout: timeout)
        } catch let failure as LoadFailure {
            throw failure
        } catch {
            throw .liveSync(server: server, reason: "\(error)")
        }
    }

    private static func measure(_ configuration: LoadConfiguration, kind: String, edits: Int, directory: URL,
                                timeout: Duration) async throws -> LiveLatencyReport {
        let server = configuration.server.absoluteString + (configuration.deviceBServer.map { " (device B: \($0.absoluteString))" } ?? "")
        let deviceA = try await LocalStore.open(path: directory.appendingPathComponent("a.journal").path)
        let deviceB = try await LocalStore.open(path: directory.appendingPathComponent("b.journal").path)
        func transport(_ url: URL) -> HTTPTransport { HTTPTransport(baseURL: url, token: configuration.token, timeout: timeout) }
        let coalescing = configuration.editCoalescingMilliseconds
        let engineA = SyncEngine(store: deviceA, transport: transport(configuration.server),
                                 options: .init(kinds: [kind], retryPolicy: RetryPolicy(editCoalescing: .milliseconds(coalescing))))
        let engineB = SyncEngine(store: deviceB, transport: transport(configuration.deviceBServer ?? configuration.server),
                                 options: .init(kinds: [kind], changeWaitTimeout: .seconds(configuration.changeWaitSeconds)))
        // B's observation hands each arrival (the highest edit number it shows, and when) to the loop below.
        let (arrivals, arrived) = AsyncStream.makeStream(of: (Int, ContinuousClock.Instant).self)
        let observer = Task {
            for await records in deviceB.observe(Query(kind)) {
                let now = ContinuousClock.now
                let highest = records.compactMap { record -> Int? in
                    guard case .int(let number)? = record.fields["n"] else { return nil }
                    return Int(number)
                }.max() ?? -1
                arrived.yield((highest, now))
            }
            arrived.finish()
        }
        await engineB.start()
        await engineA.start()
        var latencies: [Double] = []
        var iterator = arrivals.makeAsyncIterator()
        var failure: LoadFailure?
        for edit in 0..<edits {
            // Gives up on this edit when B has not shown it within the timeout (a sentinel arrival).
            let watchdog = Task {
                try await Task.sleep(for: timeout)
                arrived.yield((Self.gaveUp, ContinuousClock.now))
            }
            let start = ContinuousClock.now
            _ = try await deviceA.create(kind, id: "e\(edit)", fields: ["n": .int(Int64(edit))])
            var seenAt: ContinuousClock.Instant?
            while seenAt == nil, let (highest, at) = await iterator.next(), highest != Self.gaveUp {
                if highest >= edit { seenAt = at }
            }
            watchdog.cancel()
            guard let seenAt else {
                failure = .liveSync(server: server, reason: "edit \(edit) did not reach device B within \(timeout)")
                break
            }
            let elapsed = (seenAt - start).components
            latencies.append(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
        }
        observer.cancel()
        await engineA.stop()
        await engineB.stop()
        try? await deviceA.close()
        try? await deviceB.close()
        if let failure { throw failure }
        return LiveLatencyReport(latencies: latencies, server: server, editCoalescingMilliseconds: coalescing)
    }

    /// The arrival a watchdog posts when an edit took longer than the timeout.
    private static let gaveUp = Int.min
}
