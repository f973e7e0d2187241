import Foundation
import SyncJournal
import SyncJournalCommandLine

/// The `notes` command line: its syntax, parsing, and running a parsed command.
package enum NotesCommand {
    /// The default `--token`: the token sync-server accepts in development mode.
    package static let defaultToken = "dev-token"
    /// The default `--interval` of `watch`, in seconds: how often a watch
    /// pulls while idle when the server does not announce its changes.
    package static let defaultInterval = 5.0
    /// How long `watch` keeps one wait for server changes open before it
    /// opens the next (a server that holds waits answers sooner when it has changes).
    package static let changeWaitTimeout = Duration.seconds(60)

    /// The command line `notes` takes; options may stand before or after the command.
    package static let syntax = CommandSyntax(
        tool: "notes",
        synopses: [
            "add TEXT [--space SPACE] --dir DIR",
            "edit ID TEXT --dir DIR",
            "rm ID --dir DIR",
            "pin ID --dir DIR",
            "unpin ID --dir DIR",
            "list [--json] --dir DIR",
            "sync --dir DIR --server URL [--token TOKEN]",
            "reconcile --dir DIR --server URL [--token TOKEN]",
            "status [--json] --dir DIR --server URL [--token TOKEN]",
            "watch [--json] [--interval SECONDS] --dir DIR --server URL [--token TOKEN]",
            "space create NAME --dir DIR --server URL [--token TOKEN]",
            "space add SPACE USER --role editor|viewer|owner --dir DIR --server URL [--token TOKEN]",
            "space remove SPACE USER --dir DIR --server URL [--token TOKEN]",
            "space list [--json] --dir DIR [--server URL] [--token TOKEN]",
            "attach ID FILE [--type MEDIA] --dir DIR",
            "attachment ID NAME --out PATH --dir DIR [--server URL] [--token TOKEN]",
        ],
        summary: """
            an offline-first notes app: every change is journaled in DIR (one
            directory per device) before it is shown, and synced with a sync-server
            """,
        options: [
            .value("--dir", "DIR", help: "the device's directory (created if missing)"),
            .value("--server", "URL", help: "the sync-server, such as http://127.0.0.1:8787 (sync, reconcile, status, watch, space)"),
            .value("--token", "TOKEN", help: "the bearer token (default dev-token)"),
            .value("--model-version", "N", help: "run as version N of the app, 1 or 2 (default 2; version 1 has no pins)"),
            .flag("--json", help: "list, watch: one JSON array of {\"id\",\"text\"} per listing (version 2 adds \"pinned\", a shared note \"space\"); status: one JSON object; space list: one JSON array of spaces"),
            .value("--space", "SPACE", help: "add: the shared space to add the note to, by name or id"),
            .value("--role", "ROLE", help: "space add: the member's role, editor (reads and writes), viewer (reads) or owner"),
            .value("--interval", "SECONDS", help: "watch: how often to pull while idle, for a server that does not announce changes (default 5)"),
            .value("--type", "MEDIA", help: "attach: the file's media type, such as image/jpeg (default: from its extension)"),
            .value("--out", "PATH", help: "attachment: where to write the file"),
        ],
        positionals: CommandPositionals(names: ["COMMAND", "ARGUMENT"], minimum: 1, maximum: nil),
        notes: """
            A note's text is the rest of the command line, words joined by spaces.
            list shows notes oldest first; version 2 shows pinned notes first,
            marked [pinned]. --model-version 1 runs as the first release would:
            it reads and writes notes without pins, and a pin set by version 2
            stays as it is under its edits.
            list marks a note whose edit the server did not keep: [conflict: …];
            editing or removing the note clears the mark (rm ID also clears it
            for a note another device deleted).
            status syncs once, then prints the sync status; it exits 0 whether or
            not the server answered (the status says which).
            sync exits 76 when the server is not the one this device synced with
            or went back in time (reset, swapped or restored from a backup):
            nothing is sent and every note is kept until reconcile uploads every
            note the server lacks and syncs with it from the start.
            watch runs the sync engine: it pulls when the server announces
            changes, and every --interval seconds while idle; it prints the list
            on standard output whenever it changes, and a line on standard error
            whenever the server stops or starts answering. It ends on SIGINT,
            SIGTERM, or the end of standard input.
            A shared space is a list several users see and edit: space create
            makes one with you as its owner; space add gives another user a role
            in it (an editor adds, edits and removes notes, a viewer only reads);
            add --space puts a note in it. A note of a shared space is listed
            with the space's name. attach copies a file beside the journal (synced
            before the note refers to it) and adds it to the note under its name;
            the next sync uploads it before the edit, in chunks, going on from the
            last chunk the server acknowledged if it was cut. list shows each
            note's files, and whether each is on this device; attachment writes
            one out, downloading it first when it is not.
            When you leave a space or are removed from
            it, its notes leave this device at the next sync, and an edit of
            yours it did not take is listed as not kept, with the reason.
            exit status: 0 done; 1 no such note or space; 64 usage; 65 the journal
            cannot be read; 69 the server cannot be reached or refused the sync;
            74 the directory cannot be used; 75 another notes process uses the
            directory; 76 the server changed (run reconcile); 77 not allowed in a
            shared space (a viewer's edit; a membership change by a non-owner,
            or of an unknown user)
            """)

    /// Parses a command line (without the program name).
    ///
    /// - Throws: ``CommandLineError`` for help or a usage mistake.
    package static func parse(_ arguments: [String]) throws(CommandLineError) -> NotesInvocation {
        let parsed = try syntax.parse(arguments)
        let command = parsed.positionals[0]
        let rest = Array(parsed.positionals.dropFirst())
        guard let directory = try parsed.nonEmptyValue("--dir", expected: "a directory") else { throw .missingArgument("--dir DIR") }
        let server = try parsed.value("--server", expected: "an http(s) URL such as http://127.0.0.1:8787", httpURL)
        let token = try parsed.nonEmptyValue("--token") ?? defaultToken
        let json = parsed.has("--json")
        let interval = try parsed.positiveNumber("--interval", atMost: 3600)
        let modelVersion = try parsed.value("--model-version", expected: "a model version, 1 or 2", NotesModelVersion.init(argument:))
            ?? .current
        let space = try parsed.nonEmptyValue("--space", expected: "a space's name or id")
        let role = try parsed.value("--role", expected: "a role: editor, viewer or owner", SpaceRole.init(rawValue:))
        let mediaType = try parsed.nonEmptyValue("--type", expected: "a media type such as image/jpeg")
        let out = try parsed.nonEmptyValue("--out", expected: "a file path")

        let action: NotesAction
        switch command {
        case "add":
            action = .add(text: try text(rest), space: space)
        case "edit":
            guard let id = rest.first else { throw .missingArgument("ID") }
            action = .edit(id: id, text: try text(Array(rest.dropFirst())))
        case "rm":
            guard let id = rest.first else { throw .missingArgument("ID") }
            if rest.count > 1 { throw .unexpectedArgument(rest[1]) }
            action = .remove(id: id)
        case "pin", "unpin":
            guard let id = rest.first else { throw .missingArgument("ID") }
            if rest.count > 1 { throw .unexpectedArgument(rest[1]) }
            if !modelVersion.hasPins {
                throw .invalidCombination("\(command) needs --model-version 2 (model version 1 has no pins)")
            }
            action = .pin(id: id, pinned: command == "pin")
        case "list":
            if let extra = rest.first { throw .unexpectedArgument(extra) }
            action = .list(json: json)
        case "sync":
            if let extra = rest.first { throw .unexpectedArgument(extra) }
            action = .sync
        case "reconcile":
            if let extra = rest.first { throw .unexpectedArgument(extra) }
            action = .reconcile
        case "status":
            if let extra = rest.first { throw .unexpectedArgument(extra) }
            action = .status(json: json)
        case "watch":
            if let extra = rest.first { throw .unexpectedArgument(extra) }
            action = .watch(json: json, intervalSeconds: interval ?? defaultInterval)
        case "space":
            action = try spaceAction(rest, json: json, role: role)
        case "attach":
            guard rest.count >= 1 else { throw .missingArgument("ID") }
            guard rest.count >= 2 else { throw .missingArgument("FILE") }
            if rest.count > 2 { throw .unexpectedArgument(rest[2]) }
            action = .attach(id: rest[0], file: rest[1], mediaType: mediaType)
        case "attachment":
            guard rest.count >= 1 else { throw .missingArgument("ID") }
            guard rest.count >= 2 else { throw .missingArgument("NAME") }
            if rest.count > 2 { throw .unexpectedArgument(rest[2]) }
            guard let out else { throw .missingArgument("--out PATH") }
            action = .writeAttachment(id: rest[0], name: rest[1], output: out)
        default:
            throw .invalidCombination("unknown command \"\(command)\" (add, edit, rm, pin, unpin, list, sync, reconcile, status, watch, space, attach, attachment)")
        }
        switch action {
        case .sync, .reconcile, .status, .watch, .spaceCreate, .spaceAdd, .spaceRemove:
            if server == nil { throw .invalidCombination("\(command)\(rest.first.map { " " + $0 } ?? "") needs --server URL") }
        default:
            break
        }
        if json, !["list", "status", "watch"].contains(command), !(action == .spaceList(json: true)) {
            throw .invalidCombination("--json goes with list, status, watch or space list")
        }
        if interval != nil, command != "watch" { throw .invalidCombination("--interval goes with watch") }
        if space != nil, command != "add" { throw .invalidCombination("--space goes with add") }
        if mediaType != nil, command != "attach" { throw .invalidCombination("--type goes with attach") }
        if out != nil, command != "attachment" { throw .invalidCombination("--out goes with attachment") }
        if role != nil {
            guard case .spaceAdd = action else { throw .invalidCombination("--role goes with space add") }
        }
        return NotesInvocation(action: action, directory: directory, server: server, token: token, modelVersion: modelVersion)
    }

    /// Runs a command line and returns the exit status. `stopRequests` is
    /// called only by `watch`, for the stream that ends it.
    package static func run(arguments: [String], output: ToolOutput,
                            stopRequests: @Sendable () -> AsyncStream<Void>) async -> Int32 {
        let invocation: NotesInvocation
        do throws(CommandLineError) {
            invocation = try parse(arguments)
        } catch {
            // Help goes to standard output; a mistake is one line on standard error.
            let rejection = syntax.rejection(error)
            if rejection.status == 0 {
                output.standard(rejection.standardOutput)
            } else {
                output.error("notes: \(error) (notes --help for usage)\n")
            }
            return rejection.status
        }
        do throws(NotesError) {
            try await execute(invocation, output: output, stopRequests: stopRequests)
            return 0
        } catch {
            output.error("notes: \(error)\n")
            return error.exitStatus
        }
    }

    /// Runs a parsed command on the device directory's journal, closing it afterwards.
    package static func execute(_ invocation: NotesInvocation, output: ToolOutput,
                                stopRequests: @Sendable () -> AsyncStream<Void>) async throws(NotesError) {
        let repository = try await NotesRepository.open(directory: invocation.directory, modelVersion: invocation.modelVersion)
        do throws(NotesError) {
            switch invocation.action {
            case .add(let text, let space):
                var target = SpaceID.personal
                if let space {
                    // A space this device has not heard of yet is looked for on the server, when one is given.
                    let engine = invocation.server.map { repository.engine(server: $0, token: invocation.token) }
                    target = try await repository.space(named: space, askingServerWith: engine).id
                }
                output.standard(try await repository.add(text: text, in: target) + "\n")
            case .edit(let id, let text):
                try await repository.edit(id: id, text: text)
            case .remove(let id):
                try await repository.remove(id: id)
            case .pin(let id, let pinned):
                try await repository.setPinned(id: id, pinned)
            case .list(let json):
                output.standard(NotesListing.render(try await repository.snapshot(), json: json))
            case .sync:
                let server = try serverURL(of: invocation)
                let outcome = await repository.engine(server: server, token: invocation.token).sync()
                try NotesSyncReport.check(outcome, server: server)
                output.standard("\(outcome)\n")
            case .reconcile:
                let server = try serverURL(of: invocation)
                let outcome = await repository.engine(server: server, token: invocation.token).reconcileWithServer()
                try NotesSyncReport.check(outcome, server: server)
                output.standard("reconciled: \(outcome)\n")
            case .status(let json):
                let server = try serverURL(of: invocation)
                let engine = repository.engine(server: server, token: invocation.token)
                let report = await NotesStatusReport.afterOneSync(of: engine, server: server)
                output.standard(json ? report.json() + "\n" : report.text())
            case .watch(let json, let interval):
                let server = try serverURL(of: invocation)
                let engine = repository.engine(server: server, token: invocation.token,
                                               idlePullInterval: .milliseconds(Int64((interval * 1000).rounded(.up))),
                                               changeWaitTimeout: changeWaitTimeout)
                try await NotesWatch(repository: repository, engine: engine, server: server.absoluteString, json: json,
                                     output: output).run(until: stopRequests())
            case .attach(let id, let file, let mediaType):
                let (name, attachment) = try await repository.attach(id: id, fileAt: file, mediaType: mediaType)
                output.standard("\(name)  \(attachment.size) bytes  \(attachment.mediaType)  \(attachment.content.hex)\n")
            case .writeAttachment(let id, let name, let path):
                let engine = invocation.server.map { repository.engine(server: $0, token: invocation.token) }
                try await repository.writeAttachment(named: name, ofNote: id, to: path, downloadingWith: engine,
                                                     server: invocation.server?.absoluteString ?? "")
            case .spaceCreate, .spaceAdd, .spaceRemove, .spaceList:
                let engine = invocation.server.map { repository.engine(server: $0, token: invocation.token) }
                output.standard(try await NotesSpaces(repository: repository, engine: engine,
                                                      server: invocation.server?.absoluteString ?? "").run(invocation.action))
            }
        } catch {
            await repository.close()
            throw error
        }
        await repository.close()
    }

    /// The server a syncing command talks to.
    static func serverURL(of invocation: NotesInvocation) throws(NotesError) -> URL {
        guard let server = invocation.server else { throw .serverUnreachable(server: "(none)", reason: "no --server given") }
        return server
    }

    /// An http or https URL with a host.
    static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else { return nil }
        return url
    }

    /// The `space` command named by the first of `words`, with its arguments.
    static func spaceAction(_ words: [String], json: Bool, role: SpaceRole?) throws(CommandLineError) -> NotesAction {
        guard let verb = words.first else { throw .missingArgument("create, add, remove or list") }
        let arguments = Array(words.dropFirst())
        func exactly(_ names: [String]) throws(CommandLineError) -> [String] {
            if arguments.count < names.count { throw .missingArgument(names[arguments.count]) }
            if arguments.count > names.count { throw .unexpectedArgument(arguments[names.count]) }
            return arguments
        }
        switch verb {
        case "create":
            // A space's name may have spaces in it, as a note's text may.
            let name = arguments.joined(separator: " ")
            if name.isEmpty { throw .missingArgument("NAME") }
            return .spaceCreate(name: name)
        case "add":
            let given = try exactly(["SPACE", "USER"])
            guard let role else { throw .missingArgument("--role editor|viewer|owner") }
            return .spaceAdd(space: given[0], user: given[1], role: role)
        case "remove":
            let given = try exactly(["SPACE", "USER"])
            return .spaceRemove(space: given[0], user: given[1])
        case "list":
            _ = try exactly([])
            return .spaceList(json: json)
        default:
            throw .invalidCombination("unknown space command \"\(verb)\" (create, add, remove, list)")
        }
    }

    /// A note's text: the words given, joined by spaces.
    static func text(_ words: [String]) throws(CommandLineError) -> String {
        let text = words.joined(separator: " ")
        if text.isEmpty { throw .missingArgument("TEXT") }
        return text
    }
}
