// The journal-reader fuzz target (FuzzJournalReader in FuzzTool).
//
// Built normally: a regression runner that replays the files and directories
// given through the target, in-process, and exits 0 if none breaks an invariant:
//     swift run fuzz-journal-reader journals/samples journals/golden journals/fuzz-regressions/journal-reader
// Built by tools/fuzz.sh (-sanitize=fuzzer -DFUZZING): a libFuzzer binary.
// Its main hands the command line to libFuzzer's driver (LLVMFuzzerRunDriver),
// which parses the libFuzzer flags and calls the target for every input
// (the fuzz build links libFuzzer's own main too; SwiftPM's
// `--defsym main=<module>_main` makes this one the entry point).
import FuzzTool

#if FUZZING
import Foundation

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// The libFuzzer callback (also what libFuzzer's own main, linked in but unused, refers to).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzTarget.journalReader.testOneInput(data, size)
}

// `--make-seeds DIR` works in this build too, so tools/fuzz.sh needs no second build.
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--make-seeds" {
    FuzzRegressionRunner.runCommandLine(.journalReader)
}
var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzTestOneInput))
#else
FuzzRegressionRunner.runCommandLine(.journalReader)
#endif
