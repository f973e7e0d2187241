/// A users file or `--user` value that cannot be read.
///
/// ```swift
/// catch { print(error) }   // "users.txt:3: expected TOKEN USER, found 3 words"
/// ```
public struct UserDirectoryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file, or `nil` for a command-line value.
    public var source: String?
    /// The 1-based line, when from a file.
    public var line: Int?
    /// What is wrong.
    public var reason: String

    /// Creates an error.
    ///
    /// ```swift
    /// let error = UserDirectoryError(source: "users.txt", line: 3, reason: "an empty user")
    /// ```
    public init(source: String?, line: Int?, reason: String) {
        self.source = source
        self.line = line
        self.reason = reason
    }

    /// `FILE:LINE: reason`, or the reason alone.
    public var description: String {
        guard let source else { return reason }
        return "\(source):\(line.map(String.init) ?? "?"): \(reason)"
    }
}
