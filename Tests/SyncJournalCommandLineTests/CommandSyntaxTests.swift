import Testing
import SyncJournalCommandLine

@Suite("the shared command-line parser: flags, values, positionals, help and usage errors")
struct CommandSyntaxTests {
    static let syntax = CommandSyntax(
        tool: "tool", synopses: ["[--json] [--seed S] [--user U]... PATH...", "other"],
        summary: "does things",
        options: [
            .flag("--json", help: "JSON output"),
            .flag("--verbose", alias: "-v", help: "say more"),
            .value("--seed", "S", help: "the seed"),
            .value("--user", "U", repeatable: true, help: "a user\nsecond line"),
            .value("--seeds", "A-B", help: "a range of seeds"),
        ],
        positionals: .some("PATH", minimum: 1, maximum: 2),
        notes: "exit status: 0 fine")

    @Test("flags, values in both spellings, repeated values and positionals in any order")
    func parsesEverySpelling() throws {
        let parsed = try Self.syntax.parse(["a", "--json", "--seed", "5", "--user=x", "-v", "--user", "y", "b"])
        #expect(parsed.has("--json") && parsed.has("--verbose") && !parsed.has("--seeds"))
        #expect(parsed.value("--seed") == "5")
        #expect(parsed.values("--user") == ["x", "y"])
        #expect(parsed.positionals == ["a", "b"])
    }

    @Test("the last value of an option given twice counts")
    func lastValueCounts() throws {
        #expect(try Self.syntax.parse(["--seed", "1", "--seed", "2", "p"]).value("--seed") == "2")
    }

    @Test("a lone dash is positional, and everything after -- is positional")
    func dashAndDoubleDash() throws {
        #expect(try Self.syntax.parse(["-"]).positionals == ["-"])
        #expect(try Self.syntax.parse(["--", "--json", "-h"]).positionals == ["--json", "-h"])
    }

    @Test("--help or -h anywhere asks for help, even beside a mistake")
    func helpWins() {
        for arguments in [["--help"], ["-h"], ["--bogus", "--help"], ["x", "y", "z", "-h"]] {
            #expect(throws: CommandLineError.helpRequested, "\(arguments)") { try Self.syntax.parse(arguments) }
        }
    }

    @Test("usage mistakes are named", arguments: [
        (["--bogus", "p"], CommandLineError.unknownOption("--bogus")),
        (["-x", "p"], .unknownOption("-x")),
        (["p", "--seed"], .missingValue(option: "--seed")),
        (["--seed", "--json", "p"], .missingValue(option: "--seed")),
        (["--json=1", "p"], .unexpectedValue(option: "--json")),
        ([], .missingArgument("PATH")),
        (["a", "b", "c"], .unexpectedArgument("c")),
    ])
    func mistakes(arguments: [String], expected: CommandLineError) {
        #expect(throws: expected) { try Self.syntax.parse(arguments) }
    }

    @Test("an option's value may start with a dash when written with =")
    func dashValueWithEquals() throws {
        #expect(try Self.syntax.parse(["--seed=-1", "p"]).value("--seed") == "-1")
    }

    @Test("typed readers convert values and name a bad one with its range")
    func typedReaders() throws {
        let parsed = try Self.syntax.parse(["--seed", "7", "--seeds", "3-9", "--user", "a,b,,c", "p"])
        #expect(try parsed.integer("--seed", in: 1...10) == 7)
        #expect(try parsed.unsigned("--seed") == 7)
        #expect(try parsed.unsignedRange("--seeds") == 3...9)
        #expect(parsed.list("--user") == ["a", "b", "c"])
        #expect(try parsed.integer("--json", in: 1...2) == nil)
        #expect(throws: CommandLineError.invalidValue(option: "--seed", value: "7", expected: "a whole number from 1 to 5")) {
            try parsed.integer("--seed", in: 1...5)
        }
        let bad = try Self.syntax.parse(["--seeds", "9-3", "--seed", "0.5", "p"])
        #expect(throws: CommandLineError.self) { try bad.unsignedRange("--seeds") }
        #expect(throws: CommandLineError.self) { try bad.unsigned("--seed") }
        #expect(try bad.positiveNumber("--seed", atMost: 10) == 0.5)
        #expect(throws: CommandLineError.invalidValue(option: "--seed", value: "0.5", expected: "a number above 0 and at most 0.25")) {
            try bad.positiveNumber("--seed", atMost: 0.25)
        }
    }

    @Test("the help text lists every option, the usage lines, the summary and the notes")
    func helpText() {
        let help = Self.syntax.help
        #expect(help.hasPrefix("usage: tool [--json] [--seed S] [--user U]... PATH...\n       tool other\n  does things\n"))
        for name in ["--json", "--verbose, -v", "--seed S", "--user U (repeatable)", "second line", "-h, --help", "exit status: 0 fine"] {
            #expect(help.contains(name), "\(name)")
        }
    }

    @Test("help goes to standard output with status 0; a mistake is one line and the usage on standard error with status 64")
    func rejection() {
        let help = Self.syntax.rejection(.helpRequested)
        #expect(help.status == 0 && help.standardOutput == Self.syntax.help && help.standardError.isEmpty)
        let mistake = Self.syntax.rejection(.unknownOption("--bogus"))
        #expect(mistake.status == 64 && mistake.standardOutput.isEmpty)
        #expect(mistake.standardError.hasPrefix("tool: unknown option --bogus\nusage: tool "))
        #expect(mistake.standardError.split(separator: "\n").first == "tool: unknown option --bogus")
    }
}
