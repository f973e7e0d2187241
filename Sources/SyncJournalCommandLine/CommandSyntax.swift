/// What a tool's command line looks like: its options, its positional
/// arguments and the text around them. It parses an argument list and writes
/// the help text, so the two never disagree.
///
/// ```swift
/// let syntax = CommandSyntax(
///     tool: "journal-dump", synopses: ["[--json] PATH"],
///     options: [.flag("--json", help: "one JSON object per record")],
///     positionals: .exactly("PATH"))
/// let parsed = try syntax.parse(["--json", "a.journal"])
/// parsed.has("--json")        // true
/// parsed.positionals          // ["a.journal"]
/// ```
package struct CommandSyntax: Sendable {
    /// The tool's name, as typed.
    package var tool: String
    /// The forms of the command line after the tool's name, one per usage line.
    package var synopses: [String]
    /// What the tool does, shown under the usage lines (may be empty).
    package var summary: String
    /// The options it takes (`--help` and `-h` are always taken).
    package var options: [CommandOption]
    /// The positional arguments it takes.
    package var positionals: CommandPositionals
    /// Text after the options: exit statuses, examples (may be empty).
    package var notes: String

    /// A syntax; `summary` and `notes` may hold several lines.
    package init(tool: String, synopses: [String], summary: String = "", options: [CommandOption],
                 positionals: CommandPositionals = .none, notes: String = "") {
        self.tool = tool
        self.synopses = synopses
        self.summary = summary
        self.options = options
        self.positionals = positionals
        self.notes = notes
    }

    /// The names that ask for help, whatever else the command line holds.
    package static let helpNames: Set<String> = ["--help", "-h"]

    /// The usage lines alone: the hint under a usage error.
    package var usage: String {
        let prefix = "usage: \(tool) "
        let indent = String(repeating: " ", count: "usage: ".count) + tool + " "
        return synopses.enumerated().map { ($0.offset == 0 ? prefix : indent) + $0.element + "\n" }.joined()
    }

    /// The whole help text: usage lines, summary, one line per option, notes.
    package var help: String {
        var text = usage
        if !summary.isEmpty { text += Self.indented(summary, by: 2) }
        let rows = options.map { ($0.signature + ($0.isRepeatable ? " (repeatable)" : ""), $0.help) } + [("-h, --help", "print this help and exit")]
        let column = min(24, (rows.map(\.0.count).max() ?? 0) + 2)
        text += "options:\n"
        for (signature, help) in rows {
            let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
            let padding = String(repeating: " ", count: column + 2)
            if signature.count + 2 <= column {
                text += "  " + signature + String(repeating: " ", count: column - signature.count) + (lines.first.map(String.init) ?? "") + "\n"
            } else {
                text += "  " + signature + "\n" + padding + (lines.first.map(String.init) ?? "") + "\n"
            }
            for line in lines.dropFirst() { text += padding + line + "\n" }
        }
        if !notes.isEmpty { text += Self.indented(notes, by: 0) }
        return text
    }

    /// `text` with every line indented and a final newline.
    static func indented(_ text: String, by spaces: Int) -> String {
        let indent = String(repeating: " ", count: spaces)
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "\n" : indent + $0 + "\n" }.joined()
    }

    /// The option called `name` (by its name or alias).
    func option(named name: String) -> CommandOption? {
        options.first { $0.name == name || $0.alias == name }
    }

    /// Parses `arguments` (without the program name).
    ///
    /// `--help` or `-h` anywhere before a `--` asks for help, whatever else is
    /// there. A `--` ends the options: what follows is positional. A lone `-`
    /// is positional. An option's value is the next argument unless that is
    /// itself an option this tool knows (then the value is missing); write
    /// `--option=-value` for a value that starts with a dash.
    ///
    /// - Throws: ``CommandLineError``: ``CommandLineError/helpRequested`` for
    ///   help, another case for a usage mistake.
    package func parse(_ arguments: [String]) throws(CommandLineError) -> ParsedCommandLine {
        let beforeEnd = arguments.prefix { $0 != "--" }
        if beforeEnd.contains(where: Self.helpNames.contains) { throw .helpRequested }
        var parsed = ParsedCommandLine()
        var rest = arguments[...]
        var optionsEnded = false
        while let argument = rest.popFirst() {
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = option(named: name) else { throw .unknownOption(name) }
            if !option.takesValue {
                if inlineValue != nil { throw .unexpectedValue(option: option.name) }
                parsed.given.append((option.name, nil))
                continue
            }
            if let inlineValue {
                parsed.given.append((option.name, inlineValue))
                continue
            }
            guard let value = rest.first, self.option(named: value) == nil, !Self.helpNames.contains(value) else {
                throw .missingValue(option: option.name)
            }
            rest.removeFirst()
            parsed.given.append((option.name, value))
        }
        if parsed.positionals.count < positionals.minimum {
            throw .missingArgument(positionals.name(at: parsed.positionals.count))
        }
        if let maximum = positionals.maximum, parsed.positionals.count > maximum {
            throw .unexpectedArgument(parsed.positionals[maximum])
        }
        return parsed
    }

    /// What a tool prints for a command line it will not run, and its exit
    /// status: for help, the help text on standard output and 0; for a
    /// mistake, one line naming it and the usage lines on standard error, and 64.
    package func rejection(_ error: CommandLineError) -> CommandLineRejection {
        if error == .helpRequested { return CommandLineRejection(standardOutput: help, standardError: "", status: ToolExit.ok.rawValue) }
        return CommandLineRejection(standardOutput: "", standardError: "\(tool): \(error)\n" + usage + "(\(tool) --help for more)\n",
                                    status: ToolExit.usage.rawValue)
    }

    /// Writes ``rejection(_:)`` to `output` and returns its status.
    package func reject(_ error: CommandLineError, to output: ToolOutput) -> Int32 {
        let rejection = rejection(error)
        if !rejection.standardOutput.isEmpty { output.standard(rejection.standardOutput) }
        if !rejection.standardError.isEmpty { output.error(rejection.standardError) }
        return rejection.status
    }
}
