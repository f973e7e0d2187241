/// The process's standard output and error streams, written with `write(2)`
/// directly: one call per piece of text, unbuffered, so a line is out the
/// moment the call returns even if the process is killed right after.
package enum StandardStream: Int32, Sendable {
    /// Descriptor 1.
    case output = 1
    /// Descriptor 2.
    case error = 2

    /// Writes all of `text`; errors (a closed stream) are ignored, there is
    /// nowhere left to report them.
    package func write(_ text: String) {
        try? SystemFile.writeAll(rawValue, text.utf8)
    }
}
