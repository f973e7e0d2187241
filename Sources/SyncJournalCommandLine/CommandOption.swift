/// One `--name` a command line accepts: a flag, or an option that takes a value.
///
/// An option that takes a value reads it from the next argument (`--seed 5`)
/// or after an equals sign (`--seed=5`). Given twice, the last value counts;
/// ``ParsedCommandLine/values(_:)`` reads every one, in order, for options
/// meant to be repeated.
package struct CommandOption: Sendable, Hashable {
    /// The name with its dashes, `--seed`.
    package var name: String
    /// Another name for it, such as `-s`; `nil` for none.
    package var alias: String?
    /// What the value is called in the help text (`N`, `PATH`); `nil` for a flag.
    package var valueName: String?
    /// Whether the option is meant to be given more than once (said so in the help text).
    package var isRepeatable: Bool
    /// One line (or a few, joined with newlines) saying what it does.
    package var help: String

    /// Whether the option takes a value.
    package var takesValue: Bool { valueName != nil }

    /// A flag: present or not, no value.
    package static func flag(_ name: String, alias: String? = nil, help: String) -> CommandOption {
        CommandOption(name: name, alias: alias, valueName: nil, isRepeatable: false, help: help)
    }

    /// An option with a value named `valueName` in the help text.
    package static func value(_ name: String, _ valueName: String, repeatable: Bool = false, help: String) -> CommandOption {
        CommandOption(name: name, alias: nil, valueName: valueName, isRepeatable: repeatable, help: help)
    }

    /// How the option reads in the help text's left column: `--seed S`.
    var signature: String {
        let names = ([name] + (alias.map { [$0] } ?? [])).joined(separator: ", ")
        return valueName.map { "\(names) \($0)" } ?? names
    }
}
