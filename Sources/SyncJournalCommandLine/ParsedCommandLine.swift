/// A command line parsed by ``CommandSyntax/parse(_:)``: the options given,
/// in order, and the positional arguments, with typed readers that report a
/// bad value as a ``CommandLineError``.
package struct ParsedCommandLine: Sendable {
    /// Each option given, by its canonical name, with its value (`nil` for a flag), in order.
    package var given: [(name: String, value: String?)] = []
    /// The positional arguments, in order.
    package var positionals: [String] = []

    /// An empty parse.
    package init() {}

    /// Whether `name` was given (a flag, or an option with any value).
    package func has(_ name: String) -> Bool {
        given.contains { $0.name == name }
    }

    /// The last value given for `name`, or `nil`.
    package func value(_ name: String) -> String? {
        given.last { $0.name == name }?.value
    }

    /// Every value given for `name`, in order.
    package func values(_ name: String) -> [String] {
        given.filter { $0.name == name }.compactMap(\.value)
    }

    /// The last value of `name` converted by `convert`; `nil` when not given.
    ///
    /// - Throws: ``CommandLineError/invalidValue(option:value:expected:)``
    ///   with `expected` when `convert` returns `nil`.
    package func value<T>(_ name: String, expected: String, _ convert: (String) -> T?) throws(CommandLineError) -> T? {
        guard let text = value(name) else { return nil }
        guard let converted = convert(text) else { throw .invalidValue(option: name, value: text, expected: expected) }
        return converted
    }

    /// The last value of `name`, refusing an empty one; `nil` when not given.
    package func nonEmptyValue(_ name: String, expected: String = "a value") throws(CommandLineError) -> String? {
        try value(name, expected: expected) { $0.isEmpty ? nil : $0 }
    }

    /// The last value of `name` as a whole number within `range`; `nil` when not given.
    package func integer(_ name: String, in range: ClosedRange<Int>) throws(CommandLineError) -> Int? {
        try value(name, expected: Self.wholeNumber(range)) { Int($0).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// The last value of `name` as a whole number of at least `minimum`; `nil` when not given.
    package func integer(_ name: String, atLeast minimum: Int) throws(CommandLineError) -> Int? {
        try value(name, expected: "a whole number of at least \(minimum)") { Int($0).flatMap { $0 >= minimum ? $0 : nil } }
    }

    /// The last value of `name` as an unsigned 64-bit number; `nil` when not given.
    package func unsigned(_ name: String) throws(CommandLineError) -> UInt64? {
        try value(name, expected: "a whole number 0...\(UInt64.max)") { UInt64($0) }
    }

    /// The last value of `name` as a number above 0 and at most `maximum`; `nil` when not given.
    package func positiveNumber(_ name: String, atMost maximum: Double) throws(CommandLineError) -> Double? {
        try value(name, expected: "a number above 0 and at most \(Self.plain(maximum))") {
            Double($0).flatMap { $0 > 0 && $0 <= maximum ? $0 : nil }
        }
    }

    /// The last value of `name` as an inclusive range `A-B` of unsigned numbers with A <= B; `nil` when not given.
    package func unsignedRange(_ name: String) throws(CommandLineError) -> ClosedRange<UInt64>? {
        try value(name, expected: "a range A-B with A <= B") { text in
            let bounds = text.split(separator: "-", omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = UInt64(bounds[0]), let last = UInt64(bounds[1]), first <= last else { return nil }
            return first...last
        }
    }

    /// The last value of `name` split at commas (empty parts dropped); `nil` when not given.
    package func list(_ name: String) -> [String]? {
        value(name).map { $0.split(separator: ",").map(String.init) }
    }

    static func wholeNumber(_ range: ClosedRange<Int>) -> String {
        "a whole number from \(range.lowerBound) to \(range.upperBound)"
    }

    /// `86400` rather than `86400.0`.
    static func plain(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}
