// sync-server: the SyncJournal HTTP protocol (journals/PROTOCOL.md) over SQLite or PostgreSQL.
//
//   sync-server [--host H] [--port P] [--db PATH | --postgres CONNINFO] [--users FILE] [--user TOKEN:USER]...
//               [--max-body BYTES] [--max-batch N] [--max-connections N] [--max-connections-per-address N]
//               [--header-timeout S] [--idle-timeout S] [--workers N] [--max-user-requests N] [--user-body-budget BYTES]
//
// The logic lives in SyncJournalServer (SyncServer, SyncServerCommandLine), testable in-process.
import Foundation
import SyncJournalCommandLine
import SyncJournalServer

func fail(_ error: SyncServerError) -> Never {
    // A usage mistake is one line, then the usage lines as a hint.
    let hint = if case .usage = error { SyncServerCommandLine.syntax.usage + "(sync-server --help for more)\n" } else { "" }
    FileHandle.standardError.write(Data("sync-server: \(error)\n\(hint)".utf8))
    exit(error.exitStatus)
}

let invocation: SyncServerInvocation
do throws(SyncServerError) {
    invocation = try SyncServerCommandLine.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail(error)
}
let options: SyncServerOptions
switch invocation {
case .help:
    FileHandle.standardOutput.write(Data(SyncServerCommandLine.usage.utf8))
    exit(0)
case .newIdentity(let given):
    do throws(SyncServerError) {
        FileHandle.standardOutput.write(Data((try SyncServer.replaceIdentity(options: given) + "\n").utf8))
        exit(0)
    } catch {
        fail(error)
    }
case .run(let given):
    options = given
}

// Block the stop signals in every thread (threads inherit the mask) and take
// them with sigwait below; a reset client must not kill the process either.
signal(SIGPIPE, SIG_IGN)
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGTERM)
sigaddset(&stopSignals, SIGINT)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

if options.users.count == 0 {
    FileHandle.standardError.write(Data("sync-server: warning: no users (--users FILE or --user TOKEN:USER); every sync request gets 401 (development mode, token \"dev-token\", needs a loopback --host)\n".utf8))
}
let server: SyncServer
do throws(SyncServerError) {
    server = try SyncServer(options: options) { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
    try server.start()
} catch {
    fail(error)
}
FileHandle.standardOutput.write(Data((server.readyLine + "\n").utf8))

var received: Int32 = 0
sigwait(&stopSignals, &received)
FileHandle.standardError.write(Data("sync-server: signal \(received): stopping\n".utf8))
server.shutdown()
exit(0)
