/// Why a command line was not run: a request for the help text, or a usage
/// mistake the tool reports in one line (exit status 64, `EX_USAGE`).
package enum CommandLineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `--help` or `-h`: print the help text and exit 0.
    case helpRequested
    /// An argument starting with a dash that the tool does not know.
    case unknownOption(String)
    /// An option that takes a value came last, or was followed by another option.
    case missingValue(option: String)
    /// A value that does not parse, or lies outside its range; `expected` says what would.
    case invalidValue(option: String, value: String, expected: String)
    /// A flag given a value with `=`.
    case unexpectedValue(option: String)
    /// A positional argument that is missing, by its name in the usage text.
    case missingArgument(String)
    /// A positional argument beyond those the tool takes.
    case unexpectedArgument(String)
    /// A rule of the tool's own that the arguments break (two options that exclude each other).
    case invalidCombination(String)

    /// The one-line message, without the tool's name.
    package var description: String {
        switch self {
        case .helpRequested: "help requested"
        case .unknownOption(let option): "unknown option \(option)"
        case .missingValue(let option): "\(option) needs a value"
        case .invalidValue(let option, let value, let expected): "\(option) needs \(expected), not \"\(value)\""
        case .unexpectedValue(let option): "\(option) takes no value"
        case .missingArgument(let name): "missing \(name)"
        case .unexpectedArgument(let argument): "unexpected argument \"\(argument)\""
        case .invalidCombination(let reason): reason
        }
    }
}
