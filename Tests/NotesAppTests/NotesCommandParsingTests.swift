import Foundation
import NotesApp
import SyncJournalCommandLine
import SyncJournalTestSupport
import Testing

@Suite("notes command line parsing")
struct NotesCommandParsingTests {
    @Test("options may stand before or after the command, and give the same invocation")
    func optionsAnywhere() throws {
        let before = try NotesCommand.parse(["--dir", "a", "--server", "http://127.0.0.1:8787", "sync"])
        let after = try NotesCommand.parse(["sync", "--dir", "a", "--server", "http://127.0.0.1:8787"])
        #expect(before == after)
        #expect(before == NotesInvocation(action: .sync, directory: "a", server: URL(string: "http://127.0.0.1:8787"), token: "dev-token"))
    }

    @Test("a note's text is the rest of the command line, words joined by spaces")
    func textWords() throws {
        #expect(try NotesCommand.parse(["add", "buy", "oat", "milk", "--dir", "a"]).action == .add(text: "buy oat milk", space: nil))
        #expect(try NotesCommand.parse(["edit", "n1", "call", "mum", "--dir", "a"]).action == .edit(id: "n1", text: "call mum"))
        #expect(try NotesCommand.parse(["--dir", "a", "add", "--", "--not-an-option"]).action == .add(text: "--not-an-option", space: nil))
    }

    @Test("each command parses to its action with its defaults")
    func actions() throws {
        #expect(try NotesCommand.parse(["rm", "n1", "--dir", "a"]).action == .remove(id: "n1"))
        #expect(try NotesCommand.parse(["list", "--dir", "a"]).action == .list(json: false))
        #expect(try NotesCommand.parse(["list", "--json", "--dir", "a"]).action == .list(json: true))
        #expect(try NotesCommand.parse(["watch", "--dir", "a", "--server", "http://h:1"]).action == .watch(json: false, intervalSeconds: 5))
        #expect(try NotesCommand.parse(["status", "--dir", "a", "--server", "http://h:1"]).action == .status(json: false))
        #expect(try NotesCommand.parse(["--json", "status", "--dir", "a", "--server", "http://h:1"]).action == .status(json: true))
        let watch = try NotesCommand.parse(["watch", "--json", "--interval", "0.25", "--dir", "a", "--server", "http://h:1", "--token", "t"])
        #expect(watch.action == .watch(json: true, intervalSeconds: 0.25))
        #expect(watch.token == "t")
    }

    @Test("the space commands parse to their actions; add takes --space, space add --role")
    func spaceActions() throws {
        let server = ["--dir", "a", "--server", "http://h:1"]
        #expect(try NotesCommand.parse(["space", "create", "Weekend", "pins"] + server).action == .spaceCreate(name: "Weekend pins"))
        #expect(try NotesCommand.parse(["space", "add", "Weekend pins", "kid", "--role", "viewer"] + server).action
                == .spaceAdd(space: "Weekend pins", user: "kid", role: .viewer))
        #expect(try NotesCommand.parse(["space", "remove", "Weekend pins", "kid"] + server).action
                == .spaceRemove(space: "Weekend pins", user: "kid"))
        #expect(try NotesCommand.parse(["space", "list", "--dir", "a"]).action == .spaceList(json: false))
        #expect(try NotesCommand.parse(["space", "list", "--json", "--dir", "a"]).action == .spaceList(json: true))
        #expect(try NotesCommand.parse(["add", "tapas", "bar", "--space", "Weekend pins", "--dir", "a"]).action
                == .add(text: "tapas bar", space: "Weekend pins"))
    }

    @Test("usage mistakes are refused with the mistake named", arguments: [
        ([], CommandLineError.missingArgument("COMMAND")),
        (["list"], .missingArgument("--dir DIR")),
        (["add", "--dir", "a"], .missingArgument("TEXT")),
        (["edit", "n1", "--dir", "a"], .missingArgument("TEXT")),
        (["rm", "--dir", "a"], .missingArgument("ID")),
        (["rm", "n1", "n2", "--dir", "a"], .unexpectedArgument("n2")),
        (["list", "extra", "--dir", "a"], .unexpectedArgument("extra")),
        (["sync", "--dir", "a"], .invalidCombination("sync needs --server URL")),
        (["watch", "--dir", "a"], .invalidCombination("watch needs --server URL")),
        (["status", "--dir", "a"], .invalidCombination("status needs --server URL")),
        (["status", "now", "--dir", "a", "--server", "http://h:1"], .unexpectedArgument("now")),
        (["status", "--interval", "2", "--dir", "a", "--server", "http://h:1"], .invalidCombination("--interval goes with watch")),
        (["add", "x", "--json", "--dir", "a"], .invalidCombination("--json goes with list, status, watch or space list")),
        (["list", "--interval", "2", "--dir", "a"], .invalidCombination("--interval goes with watch")),
        (["list", "--bogus", "--dir", "a"], .unknownOption("--bogus")),
        (["space", "--dir", "a"], .missingArgument("create, add, remove or list")),
        (["space", "create", "--dir", "a", "--server", "http://h:1"], .missingArgument("NAME")),
        (["space", "create", "Pins", "--dir", "a"], .invalidCombination("space create needs --server URL")),
        (["space", "add", "Pins", "--dir", "a", "--server", "http://h:1"], .missingArgument("USER")),
        (["space", "add", "Pins", "kid", "--dir", "a", "--server", "http://h:1"], .missingArgument("--role editor|viewer|owner")),
        (["space", "add", "Pins", "kid", "x", "--role", "editor", "--dir", "a", "--server", "http://h:1"], .unexpectedArgument("x")),
        (["space", "remove", "Pins", "--dir", "a", "--server", "http://h:1"], .missingArgument("USER")),
        (["space", "list", "all", "--dir", "a"], .unexpectedArgument("all")),
        (["space", "share", "--dir", "a"], .invalidCombination("unknown space command \"share\" (create, add, remove, list)")),
        (["list", "--space", "Pins", "--dir", "a"], .invalidCombination("--space goes with add")),
        (["space", "list", "--role", "editor", "--dir", "a"], .invalidCombination("--role goes with space add")),
        (["space", "add", "Pins", "kid", "--role", "admin", "--dir", "a", "--server", "http://h:1"],
         .invalidValue(option: "--role", value: "admin", expected: "a role: editor, viewer or owner")),
        (["copy", "--dir", "a"], .invalidCombination("unknown command \"copy\" (add, edit, rm, pin, unpin, list, sync, reconcile, status, watch, space, attach, attachment)")),
    ])
    func mistakes(arguments: [String], expected: CommandLineError) {
        #expect(throws: expected) { try NotesCommand.parse(arguments) }
    }

    @Test("--server must be an http or https URL with a host, and --interval a positive number")
    func badValues() {
        for server in ["ftp://h", "127.0.0.1:8787", "http://"] {
            #expect(throws: CommandLineError.self, "\(server)") {
                try NotesCommand.parse(["sync", "--dir", "a", "--server", server])
            }
        }
        for interval in ["0", "-1", "soon"] {
            #expect(throws: CommandLineError.self, "\(interval)") {
                try NotesCommand.parse(["watch", "--dir", "a", "--server", "http://h:1", "--interval=\(interval)"])
            }
        }
    }

    @Test("a usage mistake run as a command exits 64 with one line on standard error; --help prints the help and exits 0")
    func runRejects() async {
        let captured = CapturedOutput()
        let status = await NotesCommand.run(arguments: ["add", "--dir", "a"], output: captured.output, stopRequests: { AsyncStream { $0.finish() } })
        #expect(status == 64)
        #expect(captured.standard.isEmpty)
        #expect(captured.error == "notes: missing TEXT (notes --help for usage)\n")

        let help = CapturedOutput()
        #expect(await NotesCommand.run(arguments: ["--help"], output: help.output, stopRequests: { AsyncStream { $0.finish() } }) == 0)
        #expect(help.standard.hasPrefix("usage: notes add TEXT [--space SPACE] --dir DIR\n"))
        #expect(help.error.isEmpty)
    }
}
