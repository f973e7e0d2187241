import Foundation
import SyncJournalProtocol
import SyncSimTool
import SyncJournalStore
import Testing

/// The scenario files under `Scenarios/`: one test case per file.
enum ScenarioFiles {
    /// The directory of the copied resources.
    static let directory: URL? = Bundle.module.url(forResource: "Scenarios", withExtension: nil)

    /// Every `*.scenario` file's name, sorted.
    static let names: [String] = {
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        return names.filter { $0.hasSuffix(".scenario") }.sorted()
    }()

    static func text(_ name: String) throws -> String {
        let url = try #require(directory).appendingPathComponent(name)
        return try String(contentsOf: url, encoding: .utf8)
    }
}

@Suite("Scenario files: every staged race, run as a test")
struct ScenarioFileTests {
    @Test("every group of races (offline removal, repetition and order, pulling, sent versus pending, live sync) has scenario files")
    func everyRaceGroupHasScenarios() {
        // The groups are the file-name prefixes listed in Scenarios/README.md.
        for group in ["removal", "repetition", "pulling", "in-flight", "live"] {
            #expect(ScenarioFiles.names.contains { $0.hasPrefix(group + "-") }, "no scenario in group \(group)")
        }
        #expect(ScenarioFiles.names.count >= 20)
    }

    @Test("the scenario file passes: every command runs and every expectation holds", arguments: ScenarioFiles.names)
    func scenarioPasses(_ name: String) async throws {
        let scenario = try Scenario.parse(try ScenarioFiles.text(name), file: name)
        let report = await ScenarioRunner.run(scenario)
        #expect(report.expectationsChecked > 0, "a scenario without expectations proves nothing")
        #expect(report.commandsRun == scenario.steps.count, "the run stopped early")
        for failure in report.failures { Issue.record(Comment(rawValue: failure.description)) }
    }
}

@Suite("Scenario language: failures and parse errors name file, line and what was seen")
struct ScenarioLanguageTests {
    @Test("a failing expectation reports its file, line, command and what was seen, and the run goes on")
    func failingExpectationNamesFileLineAndSeen() async throws {
        let text = """
            device A
            A create pin p1 name="Cafe" rating=4
            # a comment line
            expect A has pin p1 name="Museum"   # wrong on purpose
            expect A outbox 3
            expect A has pin p1 rating=4
            """
        let report = await ScenarioRunner.run(try Scenario.parse(text, file: "wrong.scenario"))
        #expect(report.failures.map(\.line) == [4, 5])
        #expect(report.expectationsChecked == 3)
        let first = try #require(report.failures.first)
        #expect(first.description == #"wrong.scenario:4: expect A has pin p1 name="Museum": A has pin p1 with name="Cafe" (all fields: name="Cafe" rating=4)"#)
        #expect(report.failures[1].description == "wrong.scenario:5: expect A outbox 3: A's outbox holds 1: create pin p1")
    }

    @Test("a command that cannot run is reported with its line and ends the run")
    func commandThatCannotRunEndsTheRun() async throws {
        let text = "device A\nA update pin nope n=1\nexpect A outbox 0\n"
        let report = await ScenarioRunner.run(try Scenario.parse(text, file: "x.scenario"))
        #expect(report.failures.count == 1)
        #expect(report.failures.first?.line == 2)
        #expect(report.failures.first?.seen.hasPrefix("could not run:") == true)
        #expect(report.expectationsChecked == 0)
    }

    @Test("parse errors list every bad line with the file, the line and what was seen")
    func parseErrorsAreClear() throws {
        let text = """
            device A
            A fly away
            expect B has pin p1
            A create pin p1 name="unterminated
            A set policy pin sometimes
            server tick soon
            A create pin p2 rating
            """
        do {
            _ = try Scenario.parse(text, file: "bad.scenario")
            Issue.record("parsed a file with errors")
        } catch {
            let lines = error.description.split(separator: "\n").map(String.init)
            #expect(error.problems.map(\.line) == [2, 3, 4, 5, 6, 7])
            #expect(lines[0].hasPrefix("bad.scenario:2: unknown command fly for device A"))
            #expect(lines[1] == "bad.scenario:3: unknown device B (declare it first with `device B`)")
            #expect(lines[2].hasPrefix("bad.scenario:4: unterminated string"))
            #expect(lines[3] == "bad.scenario:5: unknown policy sometimes (server-wins, client-wins, merge)")
            #expect(lines[4] == "bad.scenario:6: server tick's milliseconds must be a whole number ≥ 0, saw soon")
            #expect(lines[5] == "bad.scenario:7: expected a field name=value, saw rating")
        }
    }

    @Test("field values: quoted strings, bare words, integers, doubles, booleans, null and sets")
    func fieldValues() throws {
        let cases: [(String, FieldValue)] = [
            (#""Tapas Bar Sol""#, .string("Tapas Bar Sol")), (#""42""#, .string("42")), (#""say \"hi\"""#, .string("say \"hi\"")),
            ("Cafe", .string("Cafe")), ("42", .int(42)), ("-7", .int(-7)), ("42.5", .double(42.5)), ("1e3", .double(1000)),
            ("true", .bool(true)), ("false", .bool(false)), ("null", .null), ("{}", .stringSet([])),
            ("{b,a}", .stringSet(["a", "b"])), (#"{"x y",z}"#, .stringSet(["x y", "z"])),
        ]
        for (written, value) in cases {
            #expect(try ScenarioValue.parse(written) == value, "\(written)")
        }
        #expect(throws: ScenarioValue.Problem.self) { try ScenarioValue.parse("") }
        #expect(throws: ScenarioValue.Problem.self) { try ScenarioValue.parse("99999999999999999999") }
        #expect(ScenarioValue.format(.stringSet(["b", "a", "c d"])) == #"{a,b,"c d"}"#)
        #expect(ScenarioValue.format(["name": .string("Cafe"), "n": .int(1)]) == #"n=1 name="Cafe""#)
    }

    @Test("tokens: quoted strings keep their spaces and #, comments end the line, sets may hold spaces")
    func tokens() throws {
        let scenario = try Scenario.parse(#"device A   # the phone"# + "\n" + #"A create pin p1 name="No # here" tags={a, "b c"}"#, file: "t")
        #expect(scenario.steps.count == 2)
        #expect(scenario.steps[1].command == .create(device: "A", kind: "pin", id: "p1",
                                                      fields: ["name": .string("No # here"), "tags": .stringSet(["a", "b c"])]))
    }
}
