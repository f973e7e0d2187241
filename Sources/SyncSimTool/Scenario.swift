import SyncJournalProtocol
import SyncJournalStore

/// A scenario file, parsed: one command per line.
///
/// ```
/// device A                        # a device of user u1 with an empty journal; `device B as u2` for another user
/// server create KIND ID f=v ...   # another writer, as u1 unless `as USER` follows the ID
/// server update KIND ID f=v ...
/// server delete KIND ID
/// server tick MS                  # the server clock advances; until then writes share a timestamp
/// A offline | A online
/// A create KIND ID f=v ...
/// A update KIND ID f=v ...
/// A delete KIND ID
/// A sync                          # one full sync; returns when it ends
/// A sync lose-reply               # the server applies the push, the device never sees the reply
/// A sync hold                     # the next request is held before the server sees it; returns at once
/// A release                       # the held request reaches the server, is applied, and its reply returns
/// A crash                         # the device dies; a held request is applied by the server, its reply is lost
/// A restart                       # the device reopens its journal
/// A retire | A reopen             # the app switches endpoint and back
/// A set pull-limit N | A set batch N | A set policy KIND server-wins|client-wins|merge
/// expect A has KIND ID [f=v ...]
/// expect A lacks KIND ID
/// expect server has KIND ID [f=v ...]
/// expect server lacks KIND ID
/// expect A outbox N
/// expect A conflicts N
/// expect A merges N
/// expect A outcome ok|skipped|error
/// expect A status ok|unreadable|retired
/// ```
///
/// Extensions (each documented in `Scenarios/README.md`):
/// `A sync lose-request`, `A sync duplicate`, `wait MS` (the devices' virtual
/// clock), `server mode exactly-once|postgrest`, `server reject KIND ID`,
/// `server fail KIND ID N`, `server clear KIND ID`, `expect A outcome retry`,
/// `expect A status failed|closed|down`, `expect server applied N`,
/// `expect A quarantined N`; live sync: `A start [idle MS] [waits]` (the
/// engine schedules its own syncs, pulls every MS while idle, keeps a wait
/// for server changes open), `A stop`, `A active` (the app came to the
/// foreground: a pull at once), `A notified` (returns once A's wait reported
/// changes and the pull it brought finished), `expect A requests N` (pushes,
/// pulls and reads A's transport has seen).
///
/// `#` starts a comment (outside quotes); tokens are separated by spaces;
/// values are bare words or "quoted strings" (see ``ScenarioValue``).
public struct Scenario: Sendable, Hashable {
    /// The file name used in messages.
    public var file: String
    /// The commands, with their line numbers.
    public var steps: [ScenarioStep]

    /// Parses `text`; every malformed line is reported (``ScenarioParseError``).
    ///
    /// ```swift
    /// let scenario = try Scenario.parse("device A\nA create pin p1 name=Cafe\n", file: "x.scenario")
    /// ```
    public static func parse(_ text: String, file: String) throws(ScenarioParseError) -> Scenario {
        var parser = ScenarioParser(file: file)
        return try parser.parse(text)
    }
}

/// One command and where it was written.
public struct ScenarioStep: Sendable, Hashable {
    /// 1-based line number.
    public var line: Int
    /// The line as written (without its comment), for messages.
    public var text: String
    /// What it does.
    public var command: ScenarioCommand
}

/// How a sync is disturbed.
public enum SyncDisturbance: String, Sendable, Hashable, CaseIterable {
    /// No fault.
    case none
    /// The server applies the next push, the reply is lost.
    case loseReply = "lose-reply"
    /// The next request is lost before the server.
    case loseRequest = "lose-request"
    /// The next request reaches the server twice.
    case duplicate
    /// The next request is held until `release` (or `crash`).
    case hold
}

/// One scenario command.
public enum ScenarioCommand: Sendable, Hashable {
    /// `device NAME [as USER]`.
    case device(String, user: String)
    /// `server create KIND ID [as USER] f=v…`: another writer creates or replaces a row.
    case serverCreate(kind: String, id: String, user: String, fields: [String: FieldValue])
    /// `server update KIND ID f=v…`.
    case serverUpdate(kind: String, id: String, fields: [String: FieldValue])
    /// `server delete KIND ID`.
    case serverDelete(kind: String, id: String)
    /// `server tick MS`.
    case serverTick(Int64)
    /// `server mode exactly-once|postgrest`.
    case serverMode(exactlyOnce: Bool)
    /// `server reject KIND ID`: every mutation of the record is refused permanently.
    case serverReject(kind: String, id: String)
    /// `server fail KIND ID N`: the next N mutations of the record fail transiently.
    case serverFail(kind: String, id: String, times: Int)
    /// `server clear KIND ID`: lifts `reject`/`fail`.
    case serverClear(kind: String, id: String)
    /// `wait MS`: the devices' virtual clock advances (backoffs run out).
    case wait(Int64)
    /// `A online` / `A offline`.
    case online(device: String, Bool)
    /// `A create KIND ID f=v…`.
    case create(device: String, kind: String, id: String, fields: [String: FieldValue])
    /// `A update KIND ID f=v…`.
    case update(device: String, kind: String, id: String, fields: [String: FieldValue])
    /// `A delete KIND ID`.
    case delete(device: String, kind: String, id: String)
    /// `A sync [lose-reply|lose-request|duplicate|hold]`.
    case sync(device: String, SyncDisturbance)
    /// `A release`.
    case release(device: String)
    /// `A crash`.
    case crash(device: String)
    /// `A restart`.
    case restart(device: String)
    /// `A retire`.
    case retire(device: String)
    /// `A reopen`.
    case reopen(device: String)
    /// `A set pull-limit N`.
    case setPullLimit(device: String, Int)
    /// `A set batch N`.
    case setBatch(device: String, Int)
    /// `A set policy KIND server-wins|client-wins|merge`.
    case setPolicy(device: String, kind: String, ScenarioPolicy)
    /// `A start [idle MS] [waits]`: the engine schedules its own syncs.
    case start(device: String, idlePullMilliseconds: Int64?, changeWaits: Bool)
    /// `A stop`: the engine syncs only when told.
    case stop(device: String)
    /// `A active`: the app came to the foreground.
    case active(device: String)
    /// `A notified`: A's wait for changes reported changes and its pull finished.
    case notified(device: String)
    /// `expect …`.
    case expect(ScenarioExpectation)
}

/// A conflict policy a scenario can name.
public enum ScenarioPolicy: String, Sendable, Hashable, CaseIterable {
    /// ``ConflictPolicy/serverWins``.
    case serverWins = "server-wins"
    /// ``ConflictPolicy/clientWins``.
    case clientWins = "client-wins"
    /// ``ConflictPolicy/mergeFields``.
    case merge

    /// The store's policy.
    public var policy: ConflictPolicy {
        switch self {
        case .serverWins: return .serverWins
        case .clientWins: return .clientWins
        case .merge: return .mergeFields
        }
    }
}

/// What an `expect` line checks.
public enum ScenarioExpectation: Sendable, Hashable {
    /// `expect A has KIND ID [f=v…]`: visible, with at least these field values.
    case deviceHas(device: String, kind: String, id: String, fields: [String: FieldValue])
    /// `expect A lacks KIND ID`.
    case deviceLacks(device: String, kind: String, id: String)
    /// `expect server has KIND ID [f=v…]`: a live row with at least these field values.
    case serverHas(kind: String, id: String, fields: [String: FieldValue])
    /// `expect server lacks KIND ID`: no live row.
    case serverLacks(kind: String, id: String)
    /// `expect A outbox N`.
    case outbox(device: String, Int)
    /// `expect A conflicts N`.
    case conflicts(device: String, Int)
    /// `expect A merges N`: merges that lost nothing, not yet dismissed.
    case merges(device: String, Int)
    /// `expect A quarantined N`.
    case quarantined(device: String, Int)
    /// `expect A requests N`: pushes, pulls and reads A's transport has seen (waits not counted).
    case requests(device: String, Int)
    /// `expect A outcome ok|skipped|error|retry`: the last sync's outcome.
    case outcome(device: String, String)
    /// `expect A status ok|unreadable|retired|failed|closed|down`.
    case status(device: String, String)
    /// `expect server applied N`: mutations the server applied in all (a replay is not applied again).
    case serverApplied(Int)
}

/// Why a scenario file could not be parsed: every bad line, each naming file and line.
public struct ScenarioParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One bad line.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// The file.
        public var file: String
        /// 1-based line.
        public var line: Int
        /// What is wrong and what was seen.
        public var message: String
        /// `file:line: message`.
        public var description: String { "\(file):\(line): \(message)" }
    }

    /// Every problem found, in line order.
    public var problems: [Problem]

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// The line parser behind ``Scenario/parse(_:file:)``.
struct ScenarioParser {
    let file: String
    var devices: [String] = []
    var problems: [ScenarioParseError.Problem] = []

    init(file: String) { self.file = file }

    struct LineError: Error { var message: String }

    mutating func parse(_ text: String) throws(ScenarioParseError) -> Scenario {
        var steps: [ScenarioStep] = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, rawLine) in lines.enumerated() {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            do {
                let tokens = try Self.tokenize(line)
                if tokens.isEmpty { continue }
                let command = try parseCommand(tokens)
                if case .device(let name, _) = command { devices.append(name) }
                steps.append(ScenarioStep(line: index + 1, text: tokens.joined(separator: " "), command: command))
            } catch {
                problems.append(.init(file: file, line: index + 1, message: error.message))
            }
        }
        if !problems.isEmpty { throw ScenarioParseError(problems: problems) }
        return Scenario(file: file, steps: steps)
    }

    /// Splits a line into raw tokens (quotes kept) and drops its comment.
    static func tokenize(_ line: Substring) throws(LineError) -> [String] {
        var tokens: [String] = []
        var current = ""
        var inToken = false
        var quoted = false
        var escaped = false
        var braces = 0
        for character in line {
            if quoted {
                current.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { quoted = false }
                continue
            }
            if character == "#" && braces == 0 { break }
            if (character == " " || character == "\t") && braces == 0 {
                if inToken { tokens.append(current); current = ""; inToken = false }
                continue
            }
            inToken = true
            current.append(character)
            if character == "\"" { quoted = true }
            if character == "{" { braces += 1 }
            if character == "}" {
                braces -= 1
                if braces < 0 { throw LineError(message: "unbalanced } in \(current)") }
            }
        }
        if quoted { throw LineError(message: "unterminated string: \(current)") }
        if braces != 0 { throw LineError(message: "unbalanced { in \(current)") }
        if inToken { tokens.append(current) }
        return tokens
    }

    /// A token as a plain word: a fully quoted token is unquoted.
    static func word(_ token: String) throws(LineError) -> String {
        if token.first == "\"" {
            let parsed: (String, Substring)?
            do { parsed = try ScenarioValue.readQuoted(Substring(token)) } catch { throw LineError(message: "\(error.description): \(token)") }
            guard let (text, rest) = parsed, rest.isEmpty else { throw LineError(message: "expected one quoted word, saw \(token)") }
            return text
        }
        if token.contains("\"") { throw LineError(message: "a quote inside a word: \(token)") }
        return token
    }

    static let keywords: Set<String> = ["device", "server", "expect", "wait"]

    func known(_ device: String) throws(LineError) -> String {
        guard devices.contains(device) else {
            throw LineError(message: "unknown device \(device) (declare it first with `device \(device)`)")
        }
        return device
    }

    func count(_ token: String, what: String) throws(LineError) -> Int {
        guard let value = Int(token), value >= 0 else { throw LineError(message: "\(what) must be a whole number ≥ 0, saw \(token)") }
        return value
    }

    func fields(_ tokens: ArraySlice<String>) throws(LineError) -> [String: FieldValue] {
        var result: [String: FieldValue] = [:]
        for token in tokens {
            guard let equals = Self.firstUnquotedEquals(token) else {
                throw LineError(message: "expected a field name=value, saw \(token)")
            }
            let name = try Self.word(String(token[..<equals]))
            if name.isEmpty { throw LineError(message: "empty field name in \(token)") }
            let raw = String(token[token.index(after: equals)...])
            do { result[name] = try ScenarioValue.parse(raw) } catch {
                throw LineError(message: "field \(name): \(error.description)")
            }
        }
        return result
    }

    static func firstUnquotedEquals(_ token: String) -> String.Index? {
        var quoted = false
        var index = token.startIndex
        while index < token.endIndex {
            let character = token[index]
            if character == "\"" { quoted.toggle() }
            if character == "=" && !quoted { return index }
            index = token.index(after: index)
        }
        return nil
    }

    func kindAndID(_ tokens: [String], at index: Int, usage: String) throws(LineError) -> (String, String) {
        guard tokens.count > index + 1 else { throw LineError(message: "expected \(usage), saw `\(tokens.joined(separator: " "))`") }
        let kind = try Self.word(tokens[index])
        let id = try Self.word(tokens[index + 1])
        if kind.isEmpty || id.isEmpty { throw LineError(message: "empty kind or id in `\(tokens.joined(separator: " "))`") }
        return (kind, id)
    }

    func expectEnd(_ tokens: [String], count: Int, usage: String) throws(LineError) {
        if tokens.count != count { throw LineError(message: "expected `\(usage)`, saw `\(tokens.joined(separator: " "))`") }
    }

    func parseCommand(_ tokens: [String]) throws(LineError) -> ScenarioCommand {
        let head = try Self.word(tokens[0])
        switch head {
        case "device":
            if tokens.count == 2 || (tokens.count == 4 && tokens[2] == "as") {
                let name = try Self.word(tokens[1])
                if Self.keywords.contains(name) || name.isEmpty { throw LineError(message: "\(name) cannot name a device") }
                if devices.contains(name) { throw LineError(message: "device \(name) is already declared") }
                return .device(name, user: tokens.count == 4 ? try Self.word(tokens[3]) : "u1")
            }
            throw LineError(message: "expected `device NAME [as USER]`, saw `\(tokens.joined(separator: " "))`")
        case "wait":
            try expectEnd(tokens, count: 2, usage: "wait MS")
            return .wait(Int64(try count(tokens[1], what: "wait's milliseconds")))
        case "server":
            return try parseServer(tokens)
        case "expect":
            return .expect(try parseExpectation(tokens))
        default:
            return try parseDevice(tokens, device: try known(head))
        }
    }

    func parseServer(_ tokens: [String]) throws(LineError) -> ScenarioCommand {
        guard tokens.count >= 2 else { throw LineError(message: "expected a server command after `server`") }
        switch tokens[1] {
        case "create":
            let (kind, id) = try kindAndID(tokens, at: 2, usage: "server create KIND ID [as USER] f=v ...")
            var rest = tokens[4...]
            var user = "u1"
            if rest.first == "as" {
                guard rest.count >= 2 else { throw LineError(message: "expected a user after `as`") }
                user = try Self.word(rest[rest.startIndex + 1])
                rest = rest.dropFirst(2)
            }
            return .serverCreate(kind: kind, id: id, user: user, fields: try fields(rest))
        case "update":
            let (kind, id) = try kindAndID(tokens, at: 2, usage: "server update KIND ID f=v ...")
            return .serverUpdate(kind: kind, id: id, fields: try fields(tokens[4...]))
        case "delete":
            try expectEnd(tokens, count: 4, usage: "server delete KIND ID")
            let (kind, id) = try kindAndID(tokens, at: 2, usage: "server delete KIND ID")
            return .serverDelete(kind: kind, id: id)
        case "tick":
            try expectEnd(tokens, count: 3, usage: "server tick MS")
            return .serverTick(Int64(try count(tokens[2], what: "server tick's milliseconds")))
        case "mode":
            try expectEnd(tokens, count: 3, usage: "server mode exactly-once|postgrest")
            switch tokens[2] {
            case "exactly-once": return .serverMode(exactlyOnce: true)
            case "postgrest": return .serverMode(exactlyOnce: false)
            default: throw LineError(message: "expected exactly-once or postgrest, saw \(tokens[2])")
            }
        case "reject":
            try expectEnd(tokens, count: 4, usage: "server reject KIND ID")
            let (kind, id) = try kindAndID(tokens, at: 2, usage: "server reject KIND ID")
            return .serverReject(kind: kind, id: id)
        case "fail":
            try expectEnd(tokens, count: 5, usage: "server fail KIND ID N")
            let (kind, id) = try kindAndID(tokens, at: 2, usage: "server fail KIND ID N")
            return .serverFail(kind: kind, id: id, times: try count(tokens[4], what: "the number of failures"))
        case "clear":
            try expectEnd(tokens, count: 4, usage: "server clear KIND ID")
            let (kind, id) = try kindAndID(tokens, at: 2, usage: "server clear KIND ID")
            return .serverClear(kind: kind, id: id)
        default:
            throw LineError(message: "unknown server command \(tokens[1]) (create, update, delete, tick, mode, reject, fail, clear)")
        }
    }

    func parseDevice(_ tokens: [String], device: String) throws(LineError) -> ScenarioCommand {
        guard tokens.count >= 2 else { throw LineError(message: "expected a command after \(device)") }
        let verb = tokens[1]
        switch verb {
        case "online", "offline":
            try expectEnd(tokens, count: 2, usage: "\(device) \(verb)")
            return .online(device: device, verb == "online")
        case "create", "update":
            let (kind, id) = try kindAndID(tokens, at: 2, usage: "\(device) \(verb) KIND ID f=v ...")
            let values = try fields(tokens[4...])
            return verb == "create" ? .create(device: device, kind: kind, id: id, fields: values)
                                    : .update(device: device, kind: kind, id: id, fields: values)
        case "delete":
            try expectEnd(tokens, count: 4, usage: "\(device) delete KIND ID")
            let (kind, id) = try kindAndID(tokens, at: 2, usage: "\(device) delete KIND ID")
            return .delete(device: device, kind: kind, id: id)
        case "sync":
            if tokens.count == 2 { return .sync(device: device, .none) }
            try expectEnd(tokens, count: 3, usage: "\(device) sync [lose-reply|lose-request|duplicate|hold]")
            guard let disturbance = SyncDisturbance(rawValue: tokens[2]), disturbance != .none else {
                throw LineError(message: "unknown sync variant \(tokens[2]) (lose-reply, lose-request, duplicate, hold)")
            }
            return .sync(device: device, disturbance)
        case "release", "crash", "restart", "retire", "reopen":
            try expectEnd(tokens, count: 2, usage: "\(device) \(verb)")
            switch verb {
            case "release": return .release(device: device)
            case "crash": return .crash(device: device)
            case "restart": return .restart(device: device)
            case "retire": return .retire(device: device)
            default: return .reopen(device: device)
            }
        case "start":
            var index = 2
            var idle: Int64?
            var waits = false
            let usage = "\(device) start [idle MS] [waits]"
            while index < tokens.count {
                switch tokens[index] {
                case "idle" where idle == nil && index + 1 < tokens.count:
                    let value = try count(tokens[index + 1], what: "idle pull milliseconds")
                    if value < 1 { throw LineError(message: "idle must be at least 1 ms, saw \(tokens[index + 1])") }
                    idle = Int64(value)
                    index += 2
                case "waits" where !waits:
                    waits = true
                    index += 1
                default:
                    throw LineError(message: "unexpected \(tokens[index]); usage: \(usage)")
                }
            }
            return .start(device: device, idlePullMilliseconds: idle, changeWaits: waits)
        case "stop", "active", "notified":
            try expectEnd(tokens, count: 2, usage: "\(device) \(verb)")
            switch verb {
            case "stop": return .stop(device: device)
            case "active": return .active(device: device)
            default: return .notified(device: device)
            }
        case "set":
            guard tokens.count >= 3 else { throw LineError(message: "expected `\(device) set pull-limit N|batch N|policy KIND POLICY`") }
            switch tokens[2] {
            case "pull-limit", "batch":
                try expectEnd(tokens, count: 4, usage: "\(device) set \(tokens[2]) N")
                let value = try count(tokens[3], what: tokens[2])
                if value < 1 { throw LineError(message: "\(tokens[2]) must be at least 1, saw \(tokens[3])") }
                return tokens[2] == "batch" ? .setBatch(device: device, value) : .setPullLimit(device: device, value)
            case "policy":
                try expectEnd(tokens, count: 5, usage: "\(device) set policy KIND server-wins|client-wins|merge")
                guard let policy = ScenarioPolicy(rawValue: tokens[4]) else {
                    throw LineError(message: "unknown policy \(tokens[4]) (server-wins, client-wins, merge)")
                }
                return .setPolicy(device: device, kind: try Self.word(tokens[3]), policy)
            default:
                throw LineError(message: "unknown setting \(tokens[2]) (pull-limit, batch, policy)")
            }
        default:
            throw LineError(message: "unknown command \(verb) for device \(device) "
                + "(online, offline, create, update, delete, sync, release, crash, restart, retire, reopen, set, start, stop, active, notified)")
        }
    }

    func parseExpectation(_ tokens: [String]) throws(LineError) -> ScenarioExpectation {
        guard tokens.count >= 3 else { throw LineError(message: "expected `expect DEVICE|server WHAT ...`, saw `\(tokens.joined(separator: " "))`") }
        if tokens[1] == "server" {
            switch tokens[2] {
            case "has":
                let (kind, id) = try kindAndID(tokens, at: 3, usage: "expect server has KIND ID [f=v ...]")
                return .serverHas(kind: kind, id: id, fields: try fields(tokens[5...]))
            case "lacks":
                try expectEnd(tokens, count: 5, usage: "expect server lacks KIND ID")
                let (kind, id) = try kindAndID(tokens, at: 3, usage: "expect server lacks KIND ID")
                return .serverLacks(kind: kind, id: id)
            case "applied":
                try expectEnd(tokens, count: 4, usage: "expect server applied N")
                return .serverApplied(try count(tokens[3], what: "applied"))
            default:
                throw LineError(message: "unknown server expectation \(tokens[2]) (has, lacks, applied)")
            }
        }
        let device = try known(try Self.word(tokens[1]))
        switch tokens[2] {
        case "has":
            let (kind, id) = try kindAndID(tokens, at: 3, usage: "expect \(device) has KIND ID [f=v ...]")
            return .deviceHas(device: device, kind: kind, id: id, fields: try fields(tokens[5...]))
        case "lacks":
            try expectEnd(tokens, count: 5, usage: "expect \(device) lacks KIND ID")
            let (kind, id) = try kindAndID(tokens, at: 3, usage: "expect \(device) lacks KIND ID")
            return .deviceLacks(device: device, kind: kind, id: id)
        case "outbox", "conflicts", "merges", "quarantined", "requests":
            try expectEnd(tokens, count: 4, usage: "expect \(device) \(tokens[2]) N")
            let value = try count(tokens[3], what: tokens[2])
            switch tokens[2] {
            case "outbox": return .outbox(device: device, value)
            case "conflicts": return .conflicts(device: device, value)
            case "merges": return .merges(device: device, value)
            case "requests": return .requests(device: device, value)
            default: return .quarantined(device: device, value)
            }
        case "outcome":
            try expectEnd(tokens, count: 4, usage: "expect \(device) outcome ok|skipped|error|retry")
            guard ["ok", "skipped", "error", "retry"].contains(tokens[3]) else {
                throw LineError(message: "unknown outcome \(tokens[3]) (ok, skipped, error, retry)")
            }
            return .outcome(device: device, tokens[3])
        case "status":
            try expectEnd(tokens, count: 4, usage: "expect \(device) status ok|unreadable|retired")
            guard ["ok", "unreadable", "retired", "failed", "closed", "down"].contains(tokens[3]) else {
                throw LineError(message: "unknown status \(tokens[3]) (ok, unreadable, retired, failed, closed, down)")
            }
            return .status(device: device, tokens[3])
        default:
            throw LineError(message: "unknown expectation \(tokens[2]) (has, lacks, outbox, conflicts, quarantined, requests, outcome, status)")
        }
    }
}
