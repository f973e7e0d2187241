import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import SyncJournalCommandLine

/// `sync-demo [--dir DIR] [--server URL [--token TOKEN]]`: a narrated,
/// self-checking tour of SyncJournal with two devices and the in-memory
/// reference server, or a running `sync-server`. Each step states what must
/// hold and checks it; the exit status is 0 only if every check held.
package enum SyncDemoCommand {
    /// The command line: the demo's options and the push benchmark's.
    package static let syntax = CommandSyntax(
        tool: "sync-demo",
        synopses: ["[--dir DIR] [--server URL [--token TOKEN]]", "--push-benchmark N [--device-only] [--dir DIR]"],
        summary: """
            runs two devices against an in-memory reference server, narrating and
            checking each step; journals go to DIR (default journals/demo, replaced on each run)
            """,
        options: [
            .value("--dir", "DIR", help: "where the journals go (default journals/demo)"),
            .value("--server", "URL", help: """
                the same demo against a running sync-server (swift run sync-server),
                over HTTPTransport; each run uses kinds of its own
                """),
            .value("--token", "TOKEN", help: """
                the bearer token (default dev-token, which sync-server accepts
                when started with no users on a loopback address)
                """),
            .value("--push-benchmark", "N", help: "queues N creates, pushes them all, reports time and memory"),
            .flag("--device-only", help: "with --push-benchmark: a stand-in server that keeps nothing"),
        ])

    /// The help text.
    package static var usage: String { syntax.help }

    /// Runs the demo and returns its exit status.
    package static func run(arguments: [String], output: ToolOutput) async -> Int32 {
        let directory: String
        let benchmark: Int?
        let deviceOnly: Bool
        let serverURL: URL?
        let token: String
        do throws(CommandLineError) {
            let parsed = try syntax.parse(arguments)
            directory = parsed.value("--dir") ?? "journals/demo"
            benchmark = try parsed.integer("--push-benchmark", atLeast: 1)
            deviceOnly = parsed.has("--device-only")
            serverURL = try parsed.value("--server", expected: "an http(s) URL such as http://127.0.0.1:8787", httpURL)
            token = try parsed.nonEmptyValue("--token") ?? "dev-token"
        } catch {
            return syntax.reject(error, to: output)
        }
        if let benchmark {
            do {
                return try await PushBenchmark.run(operations: benchmark, directory: directory, withReferenceServer: !deviceOnly, output: output)
                    ? ToolExit.ok.rawValue : ToolExit.damage.rawValue
            } catch {
                output.error("sync-demo: \(error)\n")
                return ToolExit.damage.rawValue
            }
        }
        let server: any DemoServer
        if let serverURL {
            let http = HTTPDemoServer(baseURL: serverURL, token: token)
            do throws(TransportError) { try await http.checkReachable() } catch {
                switch error {
                case .offline, .serverUnreachable, .transient:
                    output.error("sync-demo: cannot reach sync-server at \(serverURL.absoluteString): \(error) (start it with: swift run sync-server)\n")
                default:
                    output.error("sync-demo: sync-server at \(serverURL.absoluteString) refused the demo's first pull: \(error)\n")
                }
                return ToolExit.unavailable.rawValue
            }
            server = http
        } else {
            server = ReferenceDemoServer()
        }
        let demo = SyncDemo(directory: directory, server: server, output: output)
        do {
            try await demo.run()
        } catch {
            output.standard("\n✗ stopped: \(error)\n")
            return ToolExit.damage.rawValue
        }
        return demo.failures == 0 ? ToolExit.ok.rawValue : ToolExit.damage.rawValue
    }
}

/// `text` as an http or https URL with a host, or `nil`.
func httpURL(_ text: String) -> URL? {
    guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else { return nil }
    return url
}
