import Foundation

/// What `sync-load` is asked to do: which server, how many clients, how long,
/// how big a push, how many pulls per push.
///
/// ```swift
/// let configuration = try LoadConfiguration(arguments: ["--server", "http://127.0.0.1:8787", "--clients", "8", "--seconds", "10"])
/// ```
public struct LoadConfiguration: Sendable, Hashable {
    /// The server's root URL.
    public var server: URL
    /// The bearer token every client sends.
    public var token: String
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
    /// Rows each client pushes before the clock starts (so pulls have pages to read).
    public var preloadRows: Int = 0

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

    /// The usage text.
    public static let usage = """
        usage: sync-load --server URL [--token TOKEN] [--clients N] [--seconds D] [--batch B]
                         [--pulls-per-push P] [--pull-limit L] [--preload R] [--timeout S]
          drives a running sync-server with N concurrent HTTP clients for D seconds;
          each client pushes B new records (a kind of its own), then pulls P times from
          its cursor; prints pushes/s, mutations/s, pulls/s, rows/s, p50/p99 latency, errors
          --batch 0: pulls only; a client that reached the end of its kind pulls it again
          from the start, so with --preload R (rows per client pushed before the clock
          starts) every pull reads a full page
          defaults: --token dev-token (sync-server's development token) --clients 8
                    --seconds 10 --batch 50 --pulls-per-push 1 --pull-limit 500 --timeout 30
          exit status: 0 no errors, 1 some requests failed, 64 bad usage, 69 server unreachable

        """

    /// Why a command line is not a configuration.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// Parses the arguments (without the program name).
    ///
    /// - Throws: ``Problem`` naming the bad or missing argument.
    public init(arguments: [String]) throws(Problem) {
        var server: URL?
        var configuration = LoadConfiguration(server: URL(fileURLWithPath: "/"))
        var index = 0
        func value(_ flag: String) throws(Problem) -> String {
            index += 1
            guard index < arguments.count else { throw Problem(description: "\(flag) needs a value") }
            return arguments[index]
        }
        func integer(_ flag: String, _ range: ClosedRange<Int>) throws(Problem) -> Int {
            let text = try value(flag)
            guard let number = Int(text), range.contains(number) else {
                throw Problem(description: "\(flag) needs a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
            }
            return number
        }
        func seconds(_ flag: String) throws(Problem) -> Double {
            let text = try value(flag)
            guard let number = Double(text), number > 0, number <= 86_400 else {
                throw Problem(description: "\(flag) needs seconds above 0, not \"\(text)\"")
            }
            return number
        }
        while index < arguments.count {
            let flag = arguments[index]
            switch flag {
            case "--server":
                let text = try value(flag)
                guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
                    throw Problem(description: "--server needs an http(s) URL such as http://127.0.0.1:8787, not \"\(text)\"")
                }
                server = url
            case "--token": configuration.token = try value(flag)
            case "--clients": configuration.clients = try integer(flag, 1...1_000)
            case "--seconds": configuration.seconds = try seconds(flag)
            case "--batch": configuration.batchSize = try integer(flag, 0...10_000)
            case "--pulls-per-push": configuration.pullsPerPush = try integer(flag, 0...1_000)
            case "--pull-limit": configuration.pullLimit = try integer(flag, 1...10_000)
            case "--timeout": configuration.timeoutSeconds = try seconds(flag)
            case "--preload": configuration.preloadRows = try integer(flag, 0...1_000_000)
            default: throw Problem(description: "unknown argument \"\(flag)\"")
            }
            index += 1
        }
        guard let server else { throw Problem(description: "--server URL is required") }
        if configuration.batchSize == 0 && configuration.pullsPerPush == 0 {
            throw Problem(description: "--batch 0 and --pulls-per-push 0 leave nothing to do")
        }
        configuration.server = server
        self = configuration
    }
}
