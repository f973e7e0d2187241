import Foundation

/// `sync-server`'s command line: parsed into options, or a request for help.
///
/// ```swift
/// switch try SyncServerCommandLine.parse(["--port", "0", "--user", "t1:alice"]) {
/// case .help: print(SyncServerCommandLine.usage)
/// case .run(let options): try SyncServer(options: options).start()
/// }
/// ```
public enum SyncServerCommandLine {
    /// The help text.
    ///
    /// ```swift
    /// print(SyncServerCommandLine.usage)
    /// ```
    public static let usage = """
        usage: sync-server [options]

        Serves the SyncJournal HTTP protocol (journals/PROTOCOL.md) from a SQLite file
        or a PostgreSQL database.

          --host HOST          address to listen on (default 127.0.0.1)
          --port PORT          port, 0 for any free one (default 8787)
          --db PATH            SQLite database file (default ./sync-server.sqlite)
          --postgres CONNINFO  use this PostgreSQL database instead (libpq connection
                               string or postgresql:// URI); tables are created if
                               missing; several servers may share one database
          --users FILE         users file: one "TOKEN USER" a line, # comments
          --user TOKEN:USER    one user (repeatable; for tests)
                               with neither, on a loopback host: development mode, the
                               token "dev-token" is user "dev" (the ready line says so)
          --max-body BYTES     largest request body taken (default 8388608)
          --max-batch N        most mutations in one push (default 1000)
          --tombstone-retention-days D
                               purge deletions older than D days (default: keep them;
                               clients behind a purged one are told to resync)
          --help               this text

        Prints "sync-server listening on http://HOST:PORT (sqlite PATH)" when ready
        ("(postgres CONNINFO)" with --postgres, the password left out).
        SIGTERM or SIGINT: stop accepting, finish requests in flight, exit 0.
        Exit status: 64 bad arguments, 66 unreadable users file, 69 cannot listen,
        73 cannot open the database.
        """

    /// Parses the arguments (without the program name); a users file is read here.
    ///
    /// ```swift
    /// let invocation = try SyncServerCommandLine.parse(CommandLine.arguments.dropFirst().map { $0 })
    /// ```
    ///
    /// - Throws: ``SyncServerError/usage(_:)`` or ``SyncServerError/users(_:)``.
    public static func parse(_ arguments: [String]) throws(SyncServerError) -> SyncServerInvocation {
        var options = SyncServerOptions()
        var choseDatabasePath = false
        var index = 0
        func value(_ flag: String) throws(SyncServerError) -> String {
            index += 1
            guard index < arguments.count else { throw .usage("\(flag) needs a value") }
            return arguments[index]
        }
        func number(_ flag: String, in range: ClosedRange<Int>) throws(SyncServerError) -> Int {
            let text = try value(flag)
            guard let number = Int(text), range.contains(number) else {
                throw .usage("\(flag) needs a number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
            }
            return number
        }
        while index < arguments.count {
            let flag = arguments[index]
            switch flag {
            case "--help", "-h":
                return .help
            case "--host":
                options.host = try value(flag)
                if options.host.isEmpty { throw .usage("--host needs a value") }
            case "--port":
                options.port = try number(flag, in: 0...65_535)
            case "--db":
                options.databasePath = try value(flag)
                if options.databasePath.isEmpty { throw .usage("--db needs a path") }
                choseDatabasePath = true
            case "--postgres":
                let connection = try value(flag)
                if connection.isEmpty { throw .usage("--postgres needs a connection string") }
                options.postgresConnection = connection
            case "--users":
                let path = try value(flag)
                let text: String
                do {
                    text = try String(contentsOfFile: path, encoding: .utf8)
                } catch {
                    throw .users(UserDirectoryError(source: path, line: nil, reason: "cannot be read (\(error.localizedDescription))"))
                }
                let file: UserDirectory
                do throws(UserDirectoryError) { file = try UserDirectory(fileText: text, path: path) } catch { throw .users(error) }
                for (token, user) in file.entriesForMerging {
                    do throws(UserDirectoryError) { try options.users.add(token: token, user: user) } catch {
                        throw .users(UserDirectoryError(source: path, line: nil, reason: error.reason))
                    }
                }
            case "--user":
                let pair = try value(flag)
                do throws(UserDirectoryError) { try options.users.add(pair: pair) } catch { throw .usage("--user: \(error.reason)") }
            case "--max-body":
                options.maximumBodyBytes = try number(flag, in: 1...(1 << 30))
            case "--max-batch":
                options.maximumBatchSize = try number(flag, in: 1...1_000_000)
            case "--tombstone-retention-days":
                options.tombstoneRetentionMilliseconds = Int64(try number(flag, in: 1...100_000)) * 86_400_000
            default:
                throw .usage("unknown argument \"\(flag)\" (see --help)")
            }
            index += 1
        }
        if options.postgresConnection != nil && choseDatabasePath {
            throw .usage("--db and --postgres choose two different storages; give one")
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
        return .run(options)
    }
}
