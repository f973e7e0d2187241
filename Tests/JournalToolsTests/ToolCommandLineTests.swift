import Foundation
import SyncJournalTestSupport
import Testing

@Suite("every tool binary: --help prints usage and exits 0, an unknown flag exits 64")
struct ToolCommandLineTests {
    static let tools = ["journal-dump", "journal-crash", "journal-salvage", "sync-demo", "sync-sim", "journal-bench",
                        "sync-server", "sync-load", "fuzz-journal-reader", "fuzz-server-reply", "fuzz-wire-messages"]

    @Test("--help and -h print the usage on standard output and exit 0", arguments: tools)
    func help(tool: String) throws {
        for flag in ["--help", "-h"] {
            let result = try BuiltTool.run(tool, [flag])
            #expect(result.status == 0, "\(tool) \(flag): \(result.standardError)")
            #expect(result.standardOutput.hasPrefix("usage: \(tool)"), "\(tool) \(flag)")
            #expect(result.standardError.isEmpty, "\(tool) \(flag)")
        }
    }

    @Test("an unknown flag is one line and the usage on standard error, exit 64", arguments: tools)
    func unknownFlag(tool: String) throws {
        let result = try BuiltTool.run(tool, ["--no-such-flag"])
        #expect(result.status == 64, "\(tool): \(result.standardError)")
        #expect(result.standardOutput.isEmpty, "\(tool)")
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.first == "\(tool): unknown option --no-such-flag", "\(tool): \(result.standardError)")
        #expect(lines.dropFirst().first?.hasPrefix("usage: \(tool)") == true, "\(tool): \(result.standardError)")
    }
}
