import Foundation
import SyncJournalHTTP
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalWire

/// Drives a running sync-server with concurrent HTTP clients (`sync-load`).
/// Each client writes a kind of its own (`load-RUN-N`), so runs and clients
/// never touch each other's rows and a pull returns only what that client
/// pushed: the numbers do not depend on what earlier runs left in the database.
///
/// ```swift
/// let report = try await LoadRunner.run(LoadConfiguration(server: URL(string: "http://127.0.0.1:8787")!, seconds: 1))
/// print(report.text, terminator: "")
/// ```
public enum LoadRunner {
    /// Checks the server, runs the clients for the configured time, and merges their tallies.
    ///
    /// - Throws: ``LoadFailure`` when the server cannot be reached or refuses the token.
    public static func run(_ configuration: LoadConfiguration) async throws(LoadFailure) -> LoadReport {
        let timeout = Duration.milliseconds(Int64(configuration.timeoutSeconds * 1_000))
        let server = configuration.server.absoluteString
        let run = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        // Every server once, and every token once.
        for client in 0..<max(configuration.moreServers.count, configuration.moreTokens.count) + 1 {
            let url = configuration.server(forClient: client)
            let probe = HTTPTransport(baseURL: url, token: configuration.token(forClient: client), timeout: timeout)
            do {
                try await probe.checkHealth()
            } catch {
                throw .unreachable(server: url.absoluteString, reason: "\(error)")
            }
            do {
                _ = try await probe.pull(PullRequest(cursors: ["load-\(run)-probe": nil], limit: 1))
            } catch {
                throw .refused(server: url.absoluteString, reason: "\(error)")
            }
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<configuration.clients {
                    group.addTask { try await preload(configuration, client: client, kind: "load-\(run)-\(client)", timeout: timeout) }
                }
                try await group.waitForAll()
            }
        } catch {
            throw .refused(server: server, reason: "preloading rows: \(error)")
        }
        var idle: IdleConnections?
        if configuration.idleConnections > 0 {
            idle = try IdleConnections.open(count: configuration.idleConnections, host: configuration.server.host ?? "127.0.0.1",
                                            port: configuration.server.port ?? 80)
        }
        defer { idle?.close() }
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int64(configuration.seconds * 1_000))
        var tally = LoadTally()
        await withTaskGroup(of: LoadTally.self) { group in
            for client in 0..<configuration.clients {
                group.addTask {
                    await runClient(configuration, client: client, kind: "load-\(run)-\(client)", timeout: timeout, until: deadline)
                }
            }
            for await clientTally in group { tally.merge(clientTally) }
        }
        let elapsed = start.duration(to: clock.now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var report = LoadReport(configuration: configuration, tally: tally, elapsedSeconds: max(seconds, 1e-9))
        report.idleStillOpen = idle?.countStillOpen()
        report.serverMemory = configuration.serverPID.flatMap { ServerMemory.read(pid: $0) }
        return report
    }

    /// Pushes the configured preload rows of `kind` in batches of 500 (ids `p0`, `p1`, …).
    static func preload(_ configuration: LoadConfiguration, client: Int, kind: String, timeout: Duration) async throws(TransportError) {
        let transport = HTTPTransport(baseURL: configuration.server(forClient: client), token: configuration.token(forClient: client),
                                      timeout: timeout)
        var next = 0
        while next < configuration.preloadRows {
            let count = min(500, configuration.preloadRows - next)
            let mutations = (next..<(next + count)).map { index in
                Mutation(operationID: .random(), kind: kind, op: .create, recordID: "p\(index)",
                         fields: ["n": .int(Int64(index)), "text": .string("preloaded row \(index)")], baseUpdatedAt: nil)
            }
            for result in try await transport.push(mutations) {
                guard case .applied = result.outcome else {
                    throw .permanent(reason: "preload push of \(kind) answered \(result.outcome)")
                }
            }
            next += count
        }
    }

    /// One client's loop: push a batch of new records, then pull from its
    /// cursor, until the deadline; through the configured HTTP client.
    static func runClient(_ configuration: LoadConfiguration, client: Int, kind: String, timeout: Duration,
                          until deadline: ContinuousClock.Instant) async -> LoadTally {
        switch configuration.client {
        case .urlSession:
            return await runURLSessionClient(configuration, client: client, kind: kind, timeout: timeout, until: deadline)
        case .plain:
            // Blocking sockets: on a thread of the client's own, never on the concurrency pool.
            return await withCheckedContinuation { (continuation: CheckedContinuation<LoadTally, Never>) in
                let thread = PlatformThread.start {
                    continuation.resume(returning: runPlainClient(configuration, client: client, kind: kind, until: deadline))
                }
                guard let thread else {
                    var tally = LoadTally()
                    tally.noteError("client \(client): no thread could be started")
                    continuation.resume(returning: tally)
                    return
                }
                thread.detach()
            }
        }
    }

    /// The loop of ``runClient(_:client:kind:timeout:until:)`` over ``HTTPTransport``.
    static func runURLSessionClient(_ configuration: LoadConfiguration, client: Int, kind: String, timeout: Duration,
                                    until deadline: ContinuousClock.Instant) async -> LoadTally {
        let transport = HTTPTransport(baseURL: configuration.server(forClient: client), token: configuration.token(forClient: client),
                                      timeout: timeout)
        let clock = ContinuousClock()
        var loop = LoadClientLoop(configuration: configuration, kind: kind)
        while clock.now < deadline {
            if let mutations = loop.nextPush() {
                let sent = clock.now
                do {
                    let results = try await transport.push(mutations)
                    loop.pushed(results, after: sent.duration(to: clock.now))
                } catch {
                    loop.tally.noteError("push: \(error)")
                }
            }
            for _ in 0..<configuration.pullsPerPush where loop.mayPull(before: deadline) {
                let sent = clock.now
                do {
                    let page = try await transport.pull(loop.nextPull())
                    loop.pulled(page, after: sent.duration(to: clock.now))
                } catch {
                    loop.tally.noteError("pull: \(error)")
                }
                if loop.endsPulls(at: deadline) { break }
            }
        }
        return loop.tally
    }

    /// The loop of ``runClient(_:client:kind:timeout:until:)`` over one
    /// ``PlainHTTPConnection``, blocking the calling thread.
    static func runPlainClient(_ configuration: LoadConfiguration, client: Int, kind: String,
                               until deadline: ContinuousClock.Instant) -> LoadTally {
        let url = configuration.server(forClient: client)
        let connection = PlainHTTPConnection(host: url.host ?? "127.0.0.1", port: url.port ?? 80, token: configuration.token(forClient: client),
                                             timeoutMilliseconds: max(1, Int(configuration.timeoutSeconds * 1_000)))
        defer { connection.close() }
        let prefix = url.path.hasSuffix("/") ? String(url.path.dropLast()) : url.path
        let parser = JSONParser()
        let clock = ContinuousClock()
        var loop = LoadClientLoop(configuration: configuration, kind: kind)
        /// The body of a 200 reply; anything else is noted as an error and gives nil.
        func post(_ endpoint: SyncEndpoint, _ body: [UInt8]) -> [UInt8]? {
            do throws(PlainHTTPFailure) {
                let reply = try connection.post(prefix + endpoint.path, body: body)
                guard reply.status == 200 else {
                    loop.tally.noteError("\(endpoint.path): HTTP \(reply.status) \(String(decoding: reply.body.prefix(200), as: UTF8.self))")
                    return nil
                }
                return reply.body
            } catch {
                loop.tally.noteError("\(endpoint.path): \(error)")
                return nil
            }
        }
        while clock.now < deadline {
            if let mutations = loop.nextPush() {
                let sent = clock.now
                if let body = post(.push, PushRequestCodec.encode(mutations)) {
                    do throws(WireError) {
                        loop.pushed(try PushReplyCodec.decode(body, answering: mutations, parser: parser), after: sent.duration(to: clock.now))
                    } catch {
                        loop.tally.noteError("push: malformed reply: \(error)")
                    }
                }
            }
            for _ in 0..<configuration.pullsPerPush where loop.mayPull(before: deadline) {
                let sent = clock.now
                if let body = post(.pull, PullRequestCodec.encode(loop.nextPull())) {
                    do throws(WireError) {
                        loop.pulled(try PullPageCodec.decode(body, parser: parser), after: sent.duration(to: clock.now))
                    } catch {
                        loop.tally.noteError("pull: malformed reply: \(error)")
                    }
                }
                if loop.endsPulls(at: deadline) { break }
            }
        }
        return loop.tally
    }
}
