#if canImport(Glibc)
import Glibc
#endif
import JournalCrashTool
import SyncJournalCommandLine

// Thin entry point. Each line goes out with one write(2) so that `acked`
// lines are on stdout the moment the record is durable, even when killed.
@Sendable func emit(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
        if n < 0 { if errno == EINTR { continue } else { return } }
        done += n
    }
}
let output = ToolOutput(standard: { emit(1, $0) }, error: { emit(2, $0) })
exit(await JournalCrashCommand.run(arguments: Array(CommandLine.arguments.dropFirst()), output: output))
