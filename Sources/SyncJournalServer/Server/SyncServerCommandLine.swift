import Foundation
import SyncJournalCommandLine
import SyncJournalProtocol

/// `sync-server`'s command line: parsed into options, or a request for help.
///
/// ```swift
/// switch try SyncServerCommandLine.parse(["--port", "0", "--user", "t1:alice"]) {
/// case .help: print(SyncServerCommandLine.usage)
/// case .run(let options): try SyncServer(options: options).start()
/// }
/// ```
public enum SyncServerCommandLine {
    /// The command line: its options and the help text.
    package static let syntax = CommandSyntax(
        tool: "sync-server", synopses: ["[options]"],
        summary: """

            Serves the SyncJournal HTTP protocol (journals/PROTOCOL.md) from a SQLite file
            or a PostgreSQL database.

            """,
        options: [
            .flag("--new-identity", help: """
                give the database (--db or --postgres) a new identity, print
                it and exit, without serving: after restoring a backup, with
                every server on it stopped, so devices that synced with it
                reconcile instead of trusting its older history
                """),
            .value("--host", "HOST", help: "address to listen on (default 127.0.0.1)"),
            .value("--port", "PORT", help: "port, 0 for any free one (default 8787)"),
            .value("--db", "PATH", help: "SQLite database file (default ./sync-server.sqlite)"),
            .value("--postgres", "CONNINFO", help: """
                use this PostgreSQL database instead (libpq connection
                string or postgresql:// URI); tables are created if
                missing; several servers may share one database
                """),
            .value("--postgres-prepared-statements", "on|off", help: """
                prepare statements each connection runs again (default
                on); off behind a pooler that moves a connection between
                server sessions (PgBouncer in transaction mode before 1.21)
                """),
            .value("--users", "FILE", repeatable: true, help: "users file: one \"TOKEN USER\" a line, # comments"),
            .value("--user", "TOKEN:USER", repeatable: true, help: """
                one user (for tests); with neither, on a loopback host:
                development mode, the token "dev-token" is user "dev"
                (the ready line says so)
                """),
            .value("--max-body", "BYTES", help: "largest request body taken (default 8388608)"),
            .value("--max-batch", "N", help: "most mutations in one push (default 1000)"),
            .value("--max-connections", "N", help: "most connections at once, more get 503 (default 20000; the open-file limit also bounds it)"),
            .value("--max-connections-per-address", "N", help: "most connections from one address, more get 503 (default 256)"),
            .value("--header-timeout", "SECONDS", help: "a request head must arrive within this, from its first byte (default 10; 408 after)"),
            .value("--idle-timeout", "SECONDS", help: "a kept-alive connection silent this long is closed (default 60)"),
            .value("--workers", "N", help: "threads running storage calls (default 16)"),
            .value("--max-user-requests", "N", help: "one user's requests in storage at once; more wait their turn (default 4)"),
            .value("--user-body-budget", "BYTES", help: "one user's body bytes in flight, more get 429 (default 33554432)"),
            .value("--max-wait-seconds", "SECONDS", help: "longest a wait for changes is held before it answers changed: false (default 60)"),
            .value("--max-user-waits", "N", help: "one user's waits for changes held at once, more get 429 (default 16)"),
            .value("--tombstone-retention-days", "D", help: """
                purge deletions older than D days (default: keep them;
                clients behind a purged one are told to resync)
                """),
            .value("--max-attachment-bytes", "BYTES", help: "largest attachment content taken, 413 too_large above (default 1073741824)"),
            .value("--attachment-quota-bytes", "BYTES", help: """
                per user, the contents they uploaded whole plus their
                unfinished uploads, 413 quota_exceeded past it (default 10737418240)
                """),
            .value("--attachment-grace-seconds", "SECONDS", help: """
                keep a content no live row refers to this long after its
                last upload, and an untouched unfinished upload; then
                collect it (default 604800)
                """),
            .value("--operation-retention-days", "D", help: """
                forget applied operation ids D days after they were
                remembered, pruned in the background each minute (default
                30; a decimal is allowed; 0 or "never": for ever). A device's edit queued
                more than D days ago that the server no longer remembers
                is never applied twice: a create of an existing record is
                answered duplicate (the device reads it back)
                """),
        ],
        notes: """

            Prints "sync-server listening on http://HOST:PORT (sqlite PATH)" when ready
            ("(postgres CONNINFO)" with --postgres, the password left out).
            SIGTERM or SIGINT: stop accepting, finish requests in flight, exit 0.
            Every reply carries the database's identity (Sync-Server-Identity).
            Exit status: 64 bad arguments, 66 unreadable users file, 69 cannot listen,
            73 cannot open the database.
            """)

    /// The help text.
    ///
    /// ```swift
    /// print(SyncServerCommandLine.usage)
    /// ```
    public static var usage: String { syntax.help }

    /// Parses the arguments (without the program name); a users file is read here.
    ///
    /// ```swift
    /// let invocation = try SyncServerCommandLine.parse(CommandLine.arguments.dropFirst().map { $0 })
    /// ```
    ///
    /// - Throws: ``SyncServerError/usage(_:)`` or ``SyncServerError/users(_:)``.
    public static func parse(_ arguments: [String]) throws(SyncServerError) -> SyncServerInvocation {
        var options = SyncServerOptions()
        let parsed: ParsedCommandLine
        do throws(CommandLineError) {
            parsed = try syntax.parse(arguments)
            if let host = try parsed.nonEmptyValue("--host", expected: "an address") { options.host = host }
            if let port = try parsed.integer("--port", in: 0...65_535) { options.port = port }
            if let path = try parsed.nonEmptyValue("--db", expected: "a path") { options.databasePath = path }
            if let connection = try parsed.nonEmptyValue("--postgres", expected: "a connection string") { options.postgresConnection = connection }
            if let prepares = try parsed.value("--postgres-prepared-statements", expected: "on or off", { ["on": true, "off": false][$0] }) {
                options.postgresPreparesStatements = prepares
            }
            if let bytes = try parsed.integer("--max-body", in: 1...(1 << 30)) { options.maximumBodyBytes = bytes }
            if let batch = try parsed.integer("--max-batch", in: 1...1_000_000) { options.maximumBatchSize = batch }
            if let count = try parsed.integer("--max-connections", in: 1...1_000_000) { options.maximumConnections = count }
            if let count = try parsed.integer("--max-connections-per-address", in: 1...1_000_000) { options.maximumConnectionsPerAddress = count }
            if let seconds = try parsed.positiveNumber("--header-timeout", atMost: 3_600) { options.headerTimeoutMilliseconds = max(1, Int(seconds * 1_000)) }
            if let seconds = try parsed.positiveNumber("--idle-timeout", atMost: 86_400) { options.idleTimeoutMilliseconds = max(1, Int(seconds * 1_000)) }
            if let count = try parsed.integer("--workers", in: 1...1_024) { options.workerThreads = count }
            if let count = try parsed.integer("--max-user-requests", in: 1...1_024) { options.maximumConcurrentRequestsPerUser = count }
            if let bytes = try parsed.integer("--user-body-budget", in: 1...(1 << 40)) { options.maximumBodyBytesInFlightPerUser = bytes }
            if let seconds = try parsed.positiveNumber("--max-wait-seconds", atMost: 3_600) {
                options.maximumChangeWaitMilliseconds = max(1, Int64(seconds * 1_000))
            }
            if let count = try parsed.integer("--max-user-waits", in: 1...100_000) { options.maximumChangeWaitsPerUser = count }
            if let days = try parsed.integer("--tombstone-retention-days", in: 1...100_000) {
                options.tombstoneRetentionMilliseconds = Int64(days) * 86_400_000
            }
            if let bytes = try parsed.integer("--max-attachment-bytes", in: 1...(1 << 50)) { options.maximumAttachmentBytes = Int64(bytes) }
            if let bytes = try parsed.integer("--attachment-quota-bytes", in: 0...(1 << 56)) { options.attachmentQuotaBytes = Int64(bytes) }
            if let seconds = try parsed.integer("--attachment-grace-seconds", in: 0...(100 * 365 * 86_400)) {
                options.attachmentGraceMilliseconds = Int64(seconds) * 1_000
            }
            // Days as a decimal, so a load test can watch pruning within minutes (0.001 is 86.4 seconds).
            if let milliseconds = try parsed.value("--operation-retention-days", expected: "a number of days from 0 to 100000, or never", {
                text -> Int64? in
                if text == "never" { return 0 }
                guard let days = Double(text), days.isFinite, days >= 0, days <= 100_000, text.first != "+" else { return nil }
                return Int64((days * Double(OperationRetention.dayMilliseconds)).rounded())
            }) {
                options.operationRetention = milliseconds == 0 ? nil : OperationRetention(retentionMilliseconds: milliseconds)
            }
        } catch {
            if error == .helpRequested { return .help }
            throw .usage(error.description)
        }
        let choseDatabasePath = parsed.has("--db")
        // Users files and single users in the order given, so a clash names the later one.
        for (name, value) in parsed.given where name == "--users" || name == "--user" {
            guard let value else { continue }
            if name == "--user" {
                do throws(UserDirectoryError) { try options.users.add(pair: value) } catch { throw .usage("--user: \(error.reason)") }
                continue
            }
            let text: String
            do {
                text = try String(contentsOfFile: value, encoding: .utf8)
            } catch {
                throw .users(UserDirectoryError(source: value, line: nil, reason: "cannot be read (\(error.localizedDescription))"))
            }
            let file: UserDirectory
            do throws(UserDirectoryError) { file = try UserDirectory(fileText: text, path: value) } catch { throw .users(error) }
            for (token, user) in file.entriesForMerging {
                do throws(UserDirectoryError) { try options.users.add(token: token, user: user) } catch {
                    throw .users(UserDirectoryError(source: value, line: nil, reason: error.reason))
                }
            }
        }
        if options.postgresConnection != nil && choseDatabasePath {
            throw .usage("--db and --postgres choose two different storages; give one")
        }
        if options.postgresConnection == nil && parsed.has("--postgres-prepared-statements") {
            throw .usage("--postgres-prepared-statements needs --postgres")
        }
        // No users on a loopback address: a development server. The token is
        // public, so this never happens on an address other machines reach.
        if options.users.count == 0 && SyncServerOptions.isLoopback(options.host) {
            do throws(UserDirectoryError) {
                try options.users.add(token: SyncServerOptions.developmentToken, user: SyncServerOptions.developmentUser)
            } catch {
                throw .usage("development token: \(error.reason)")
            }
            options.developmentMode = true
        }
        return parsed.has("--new-identity") ? .newIdentity(options) : .run(options)
    }
}
