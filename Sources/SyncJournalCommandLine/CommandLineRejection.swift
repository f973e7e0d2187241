/// What a tool prints instead of running, and how it exits: the help text
/// (status 0), or a usage mistake (status 64).
package struct CommandLineRejection: Sendable, Hashable {
    /// Text for standard output (the help text, or empty).
    package var standardOutput: String
    /// Text for standard error (the mistake and the usage lines, or empty).
    package var standardError: String
    /// The exit status: 0 for help, 64 for a mistake.
    package var status: Int32
}
