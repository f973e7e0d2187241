import Foundation
import SyncJournalCommandLine

/// What `sync-load` is asked to do: which server, how many clients, how long,
/// how big a push, how many pulls per push.
///
/// ```swift
/// let configuration = try LoadConfiguration(arguments: ["--server", "http://127.0.0.1:8787", "--clients", "8", "--seconds", "10"])
/// ```
public struct LoadConfiguration: Sendable, Hashable {
    /// The server's root URL.
    public var server: URL
    /// Further servers (on the same database): client `i` talks to
    /// `([server] + moreServers)[i % count]`.
    public var moreServers: [URL] = []
    /// The bearer token every client sends.
    public var token: String
    /// Further tokens (further users): client `i` sends
    /// `([token] + moreTokens)[i % count]`.
    public var moreTokens: [String] = []
    /// Concurrent clients, each a loop of push, then pulls.
    public var clients: Int
    /// How long the clients run.
    public var seconds: Double
    /// Mutations per push (0: the clients only pull).
    public var batchSize: Int
    /// Pulls after each push (0: the clients only push).
    public var pullsPerPush: Int
    /// The largest page a pull asks for.
    public var pullLimit: Int
    /// Each request's timeout.
    public var timeoutSeconds: Double
    /// The HTTP client the load's pushes and pulls go through.
    public var client: LoadClientKind = .urlSession
    /// Rows each client pushes before the clock starts (so pulls have pages to read).
    public var preloadRows: Int = 0
    /// Connections opened before the clock starts, each answered one health
    /// check and then silent until the run ends (0: none).
    public var idleConnections: Int = 0
    /// The server's process id: its resident memory is read from
    /// `/proc/PID/status` at the end of the run and reported.
    public var serverPID: Int32?
    /// `--live-latency N`: instead of the load, measure how long N edits on
    /// one device take to show on another that waits for changes (`nil`: the load).
    public var liveLatencyEdits: Int?
    /// With ``liveLatencyEdits``: how long device A's engine waits after an edit before pushing it.
    public var editCoalescingMilliseconds: Int64 = 0
    /// With ``liveLatencyEdits``: the timeout device B's waits for changes ask for.
    public var changeWaitSeconds: Int64 = 30
    /// With ``liveLatencyEdits``: the server device B syncs with (`nil`:
    /// ``server``), such as a second sync-server on the same PostgreSQL database.
    public var deviceBServer: URL?

    /// The defaults: 8 clients, 10 s, batches of 50, one pull per push.
    public init(server: URL, token: String = "dev-token", clients: Int = 8, seconds: Double = 10, batchSize: Int = 50,
                pullsPerPush: Int = 1, pullLimit: Int = 500, timeoutSeconds: Double = 30) {
        self.server = server
        self.token = token
        self.clients = clients
        self.seconds = seconds
        self.batchSize = batchSize
        self.pullsPerPush = pullsPerPush
        self.pullLimit = pullLimit
        self.timeoutSeconds = timeoutSeconds
    }

    /// The command line: its options and the help text.
    package static let syntax = CommandSyntax(
        tool: "sync-load",
        synopses: ["--server URL... [--token TOKEN...] [--clients N] [--seconds D] [--batch B] "
                   + "[--pulls-per-push P] [--pull-limit L] [--preload R] [--timeout S] [--idle-connections N] [--server-pid PID] [--client urlsession|plain]",
                   "--server URL --live-latency N [--device-b-server URL] [--token TOKEN] [--edit-coalescing MS] [--wait-timeout S] [--timeout S]"],
        summary: """
            drives a running sync-server with N concurrent HTTP clients for D seconds;
            each client pushes B new records (a kind of its own), then pulls P times from
            its cursor; prints pushes/s, mutations/s, pulls/s, rows/s, p50/p99 latency, errors
            --batch 0: pulls only; a client that reached the end of its kind pulls it again
            from the start, so with --preload R (rows per client pushed before the clock
            starts) every pull reads a full page
            --live-latency N: two devices of one user (local stores and sync engines over
            HTTP); B waits for changes with no idle pulls and observes a query, A makes N
            edits one at a time, each awaited in B's query; prints p50/p95/max latency from
            A's edit call to B's observation
            """,
        options: [
            .value("--server", "URL", repeatable: true, help: """
                the running sync-server (required); given several times (servers
                on one database), client i talks to the (i mod count)th
                """),
            .value("--token", "TOKEN", repeatable: true, help: """
                the bearer token (default dev-token, sync-server's development token);
                given several times (one per user), client i sends the (i mod count)th
                """),
            .value("--clients", "N", help: "concurrent clients, 1 to 1000 (default 8)"),
            .value("--seconds", "D", help: "how long the clients run (default 10)"),
            .value("--batch", "B", help: "mutations per push, 0 to 10000 (default 50)"),
            .value("--pulls-per-push", "P", help: "pulls after each push, 0 to 1000 (default 1)"),
            .value("--pull-limit", "L", help: "the largest page a pull asks for, 1 to 10000 (default 500)"),
            .value("--preload", "R", help: "rows each client pushes before the clock starts (default 0)"),
            .value("--timeout", "S", help: "each request's timeout in seconds (default 30)"),
            .value("--idle-connections", "N", help: """
                before the clock starts, open N connections that each ask one
                health check and then stay silent until the end (default 0);
                the report says how many the server still held at the end
                """),
            .value("--client", "urlsession|plain", help: """
                the HTTP client of the pushes and pulls: urlsession (default,
                HTTPTransport, as an app syncs) or plain (a lean HTTP/1.1
                client on a thread per client, http only), which leaves a
                server on the same machine more of the CPU
                """),
            .value("--server-pid", "PID", help: "report this process's resident memory (VmRSS, VmHWM from /proc/PID/status) at the end"),
            .value("--live-latency", "N", help: "measure live sync latency over N edits, 1 to 100000, instead of the load"),
            .value("--edit-coalescing", "MS", help: "with --live-latency: device A pushes this long after an edit (default 0)"),
            .value("--device-b-server", "URL", help: "with --live-latency: device B syncs with this server instead (one sharing A's database)"),
            .value("--wait-timeout", "S", help: "with --live-latency: the timeout device B's waits for changes ask for (default 30)"),
        ],
        notes: "exit status: 0 no errors, 1 some requests failed, 64 bad usage, 69 server unreachable")

    /// The server client `client` talks to.
    public func server(forClient client: Int) -> URL {
        client % (moreServers.count + 1) == 0 ? server : moreServers[client % (moreServers.count + 1) - 1]
    }

    /// The token client `client` sends.
    public func token(forClient client: Int) -> String {
        client % (moreTokens.count + 1) == 0 ? token : moreTokens[client % (moreTokens.count + 1) - 1]
    }

    /// The help text.
    public static var usage: String { syntax.help }

    /// Why a command line is not a configuration.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// Parses the arguments (without the program name).
    ///
    /// - Throws: ``Problem`` naming the bad or missing argument.
    public init(arguments: [String]) throws(Problem) {
        do throws(CommandLineError) { self = try Self.parse(arguments) } catch {
            throw Problem(description: error == .helpRequested ? "help requested" : error.description)
        }
    }

    /// Parses the arguments (without the program name).
    ///
    /// - Throws: ``CommandLineError`` for `--help` or a usage mistake.
    package static func parse(_ arguments: [String]) throws(CommandLineError) -> LoadConfiguration {
        let parsed = try syntax.parse(arguments)
        let httpURL = "an http(s) URL such as http://127.0.0.1:8787"
        var servers: [URL] = []
        for text in parsed.values("--server") {
            guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
                throw .invalidValue(option: "--server", value: text, expected: httpURL)
            }
            servers.append(url)
        }
        guard let server = servers.first else { throw .invalidCombination("--server URL is required") }
        var configuration = LoadConfiguration(server: server)
        configuration.moreServers = Array(servers.dropFirst())
        let tokens = parsed.values("--token")
        if let token = tokens.first {
            configuration.token = token
            configuration.moreTokens = Array(tokens.dropFirst())
        }
        if let clients = try parsed.integer("--clients", in: 1...1_000) { configuration.clients = clients }
        if let seconds = try parsed.positiveNumber("--seconds", atMost: 86_400) { configuration.seconds = seconds }
        if let batch = try parsed.integer("--batch", in: 0...10_000) { configuration.batchSize = batch }
        if let pulls = try parsed.integer("--pulls-per-push", in: 0...1_000) { configuration.pullsPerPush = pulls }
        if let limit = try parsed.integer("--pull-limit", in: 1...10_000) { configuration.pullLimit = limit }
        if let timeout = try parsed.positiveNumber("--timeout", atMost: 86_400) { configuration.timeoutSeconds = timeout }
        if let preload = try parsed.integer("--preload", in: 0...1_000_000) { configuration.preloadRows = preload }
        if let idle = try parsed.integer("--idle-connections", in: 0...1_000_000) { configuration.idleConnections = idle }
        if let pid = try parsed.integer("--server-pid", in: 1...Int(Int32.max)) { configuration.serverPID = Int32(pid) }
        if let edits = try parsed.integer("--live-latency", in: 1...100_000) { configuration.liveLatencyEdits = edits }
        if let milliseconds = try parsed.integer("--edit-coalescing", in: 0...60_000) { configuration.editCoalescingMilliseconds = Int64(milliseconds) }
        if let seconds = try parsed.integer("--wait-timeout", in: 1...3_600) { configuration.changeWaitSeconds = Int64(seconds) }
        configuration.deviceBServer = try parsed.value("--device-b-server", expected: httpURL, { text -> URL? in
            guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else { return nil }
            return url
        })
        if let client = try parsed.value("--client", expected: "urlsession or plain", { LoadClientKind(rawValue: $0) }) {
            configuration.client = client
        }
        if configuration.client == .plain {
            if configuration.liveLatencyEdits != nil {
                throw .invalidCombination("--client plain drives the load; --live-latency syncs through HTTPTransport")
            }
            if let secure = servers.first(where: { $0.scheme != "http" }) {
                throw .invalidValue(option: "--server", value: secure.absoluteString, expected: "an http URL with --client plain (it speaks no TLS)")
            }
        }
        if configuration.batchSize == 0 && configuration.pullsPerPush == 0 {
            throw .invalidCombination("--batch 0 and --pulls-per-push 0 leave nothing to do")
        }
        return configuration
    }
}
