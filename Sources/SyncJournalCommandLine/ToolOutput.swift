/// Where a tool writes its output; tests capture it in memory.
package struct ToolOutput: Sendable {
    /// Writes one chunk to standard output.
    package var standard: @Sendable (String) -> Void
    /// Writes one chunk to standard error.
    package var error: @Sendable (String) -> Void

    /// An output with the given sinks.
    package init(standard: @escaping @Sendable (String) -> Void, error: @escaping @Sendable (String) -> Void) {
        self.standard = standard
        self.error = error
    }
}
