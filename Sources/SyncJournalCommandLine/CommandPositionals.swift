/// The arguments a command line takes that are not options: how many, and
/// what they are called in the usage text.
package struct CommandPositionals: Sendable, Hashable {
    /// Their names in the error for a missing one, in order (`SOURCE`, `DEST`);
    /// the last names every further one when ``maximum`` is `nil`.
    package var names: [String]
    /// The fewest allowed.
    package var minimum: Int
    /// The most allowed; `nil` for no limit.
    package var maximum: Int?

    /// Between `minimum` and `maximum` arguments named `names`.
    package init(names: [String], minimum: Int, maximum: Int?) {
        self.names = names
        self.minimum = minimum
        self.maximum = maximum
    }

    /// No positional arguments.
    package static let none = CommandPositionals(names: [], minimum: 0, maximum: 0)

    /// Exactly the named arguments, in order.
    package static func exactly(_ names: String...) -> CommandPositionals {
        CommandPositionals(names: names, minimum: names.count, maximum: names.count)
    }

    /// Between `minimum` and `maximum` arguments (no limit when `maximum` is `nil`), each called `name`.
    package static func some(_ name: String, minimum: Int = 0, maximum: Int? = nil) -> CommandPositionals {
        CommandPositionals(names: [name], minimum: minimum, maximum: maximum)
    }

    /// What the argument at `index` is called.
    func name(at index: Int) -> String {
        guard !names.isEmpty else { return "ARGUMENT" }
        return names[min(index, names.count - 1)]
    }
}
