// journal-bench: the store's workloads against SQLite and the raw disk,
// interleaved in one process run (see `journal-bench --help`).
// The logic lives in JournalBench, testable in-process.
#if canImport(Glibc)
import Glibc
#endif
import JournalBench

func write(_ text: String, to fd: Int32) {
    var bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
        let count = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
        if count <= 0 { break }
        done += count
    }
}

let result = await JournalBench.main(Array(CommandLine.arguments.dropFirst())) { line in write(line, to: 2) }
write(result.output, to: 1)
write(result.errors, to: 2)
exit(result.status)
