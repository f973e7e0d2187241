import Testing
import SyncJournalProtocol
@testable import SyncJournalServer

@Suite("sync-server's --operation-retention-days")
struct OperationRetentionOptionTests {
    static func retention(_ arguments: [String]) throws -> OperationRetention? {
        guard case .run(let options) = try SyncServerCommandLine.parse(["--port", "0"] + arguments) else {
            Issue.record("not a run")
            return nil
        }
        return options.operationRetention
    }

    @Test("the retention defaults to 30 days, takes days (decimals too), and 0 or never keeps operations for ever")
    func parsesDays() throws {
        #expect(try Self.retention([]) == OperationRetention(days: 30))
        #expect(try Self.retention(["--operation-retention-days", "7"])?.retentionMilliseconds == 7 * 86_400_000)
        #expect(try Self.retention(["--operation-retention-days", "100000"]) == OperationRetention(days: 100_000))
        #expect(try Self.retention(["--operation-retention-days", "0.001"])?.retentionMilliseconds == 86_400)
        #expect(try Self.retention(["--operation-retention-days", "1.5"])?.retentionMilliseconds == 129_600_000)
        #expect(try Self.retention(["--operation-retention-days", "0"]) == nil)
        #expect(try Self.retention(["--operation-retention-days", "never"]) == nil)
    }

    @Test("a retention that is not 0 to 100000 days or never is refused with a message naming the option and the value")
    func refusesBadValues() {
        for value in ["-1", "-0.5", "abc", "", "100001", "Never", "nan", "inf", "+3", "1e999"] {
            do {
                _ = try SyncServerCommandLine.parse(["--operation-retention-days", value])
                Issue.record("\"\(value)\" was taken")
            } catch {
                guard case .usage(let message) = error else { Issue.record("not a usage error: \(error)"); continue }
                #expect(message.contains("--operation-retention-days") && message.contains("\"\(value)\""), "\(message)")
            }
        }
    }

    @Test("the help text documents the option")
    func documented() {
        #expect(SyncServerCommandLine.usage.contains("--operation-retention-days"))
    }
}
