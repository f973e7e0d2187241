import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// `sync-demo [--dir DIR] [--server URL [--token TOKEN]]`: a narrated,
/// self-checking tour of SyncJournal with two devices and the in-memory
/// reference server, or a running `sync-server`. Each step states what must
/// hold and checks it; the exit status is 0 only if every check held.
public enum SyncDemoCommand {
    /// The usage text.
    public static let usage = """
        usage: sync-demo [--dir DIR] [--server URL [--token TOKEN]]
               sync-demo --push-benchmark N [--device-only] [--dir DIR]
          runs two devices against an in-memory reference server, narrating and
          checking each step; journals go to DIR (default journals/demo, replaced on each run)
          --server URL        the same demo against a running sync-server (swift run sync-server),
                              over HTTPTransport; each run uses kinds of its own
          --token TOKEN       the bearer token (default dev-token, which sync-server accepts
                              when started with no users on a loopback address)
          --push-benchmark N  queues N creates, pushes them all, reports time and memory
          --device-only       with --push-benchmark: a stand-in server that keeps nothing

        """

    /// Runs the demo and returns its exit status.
    public static func run(arguments: [String], output: ToolOutput) async -> Int32 {
        var directory = "journals/demo"
        var benchmark: Int?
        var deviceOnly = false
        var serverURL: URL?
        var token = "dev-token"
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--dir":
                guard let value = rest.popFirst() else { output.error(usage); return ToolExit.usage.rawValue }
                directory = value
            case "--push-benchmark":
                guard let value = rest.popFirst().flatMap(Int.init), value > 0 else { output.error(usage); return ToolExit.usage.rawValue }
                benchmark = value
            case "--server":
                guard let text = rest.popFirst(), let url = URL(string: text), let scheme = url.scheme,
                      ["http", "https"].contains(scheme), url.host != nil else {
                    output.error("sync-demo: --server needs an http(s) URL such as http://127.0.0.1:8787\n" + usage)
                    return ToolExit.usage.rawValue
                }
                serverURL = url
            case "--token":
                guard let value = rest.popFirst(), !value.isEmpty else { output.error(usage); return ToolExit.usage.rawValue }
                token = value
            case "--device-only":
                deviceOnly = true
            case "--help", "-h":
                output.standard(usage)
                return ToolExit.ok.rawValue
            default:
                output.error(usage)
                return ToolExit.usage.rawValue
            }
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
                case .offline, .transient:
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
