/// Bearer tokens and the users they stand for.
///
/// The users file has one `TOKEN USER` pair a line; blank lines and lines
/// starting with `#` are skipped. Tokens are compared in constant time.
///
/// ```swift
/// var users = try UserDirectory(fileText: "# token user\nsecret-1 alice\n", path: "users.txt")
/// try users.add(token: "t2", user: "bob")
/// users.user(forToken: "secret-1")   // "alice"
/// ```
public struct UserDirectory: Sendable {
    private var entries: [(token: [UInt8], user: String)] = []

    /// An empty directory (every request with a token is refused).
    ///
    /// ```swift
    /// let nobody = UserDirectory()
    /// ```
    public init() {}

    /// The users of a users file's text.
    ///
    /// ```swift
    /// let users = try UserDirectory(fileText: "t1 alice\n", path: "users.txt")
    /// ```
    ///
    /// - Throws: ``UserDirectoryError`` naming the file and line of a bad entry.
    public init(fileText: String, path: String) throws(UserDirectoryError) {
        for (index, line) in fileText.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingSpaces.replacing("\r", with: "")
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let parts = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count == 2 else {
                throw UserDirectoryError(source: path, line: index + 1, reason: "expected TOKEN USER, found \(parts.count) words")
            }
            do throws(UserDirectoryError) {
                try add(token: String(parts[0]), user: String(parts[1]))
            } catch {
                throw UserDirectoryError(source: path, line: index + 1, reason: error.reason)
            }
        }
    }

    /// The longest user name, in UTF-8 bytes: a user is stored as the owner
    /// of every row and remembered operation, inside the storage's keys.
    public static let maximumUserBytes = 128

    /// Adds one token for `user`.
    ///
    /// ```swift
    /// try users.add(token: "t1", user: "alice")
    /// ```
    ///
    /// - Throws: ``UserDirectoryError`` for an empty token or user, a user
    ///   over ``maximumUserBytes`` or holding U+0000, a token with spaces or
    ///   control characters, or a token given twice.
    public mutating func add(token: String, user: String) throws(UserDirectoryError) {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw UserDirectoryError(source: nil, line: nil, reason: "a token must be visible ASCII without spaces")
        }
        guard !user.isEmpty else { throw UserDirectoryError(source: nil, line: nil, reason: "an empty user") }
        // The user is part of the storage's keys, beside a kind and a record id.
        guard user.utf8.count <= Self.maximumUserBytes, !user.utf8.contains(0) else {
            throw UserDirectoryError(source: nil, line: nil, reason: "a user must be at most \(Self.maximumUserBytes) bytes of UTF-8 without U+0000")
        }
        guard !entries.contains(where: { $0.token == bytes }) else {
            throw UserDirectoryError(source: nil, line: nil, reason: "a token is given twice")
        }
        entries.append((bytes, user))
    }

    /// Parses a `TOKEN:USER` command-line value and adds it.
    ///
    /// ```swift
    /// try users.add(pair: "t1:alice")
    /// ```
    public mutating func add(pair: String) throws(UserDirectoryError) {
        guard let colon = pair.firstIndex(of: ":") else {
            throw UserDirectoryError(source: nil, line: nil, reason: "\"\(pair)\" is not TOKEN:USER")
        }
        try add(token: String(pair[..<colon]), user: String(pair[pair.index(after: colon)...]))
    }

    /// The number of tokens.
    ///
    /// ```swift
    /// if users.count == 0 { print("warning: no users") }
    /// ```
    public var count: Int { entries.count }

    /// Whether `user` could be a user of some directory: 1 to
    /// ``maximumUserBytes`` bytes of UTF-8 without U+0000 (what a storage
    /// without a directory takes as known).
    package static func isPossibleUser(_ user: String) -> Bool {
        !user.isEmpty && user.utf8.count <= maximumUserBytes && !user.utf8.contains(0)
    }

    /// Whether some token of the directory is `user`'s.
    package func knows(user: String) -> Bool { entries.contains { $0.user == user } }

    /// The user `token` belongs to, or `nil`. Every entry is compared in
    /// full, so the time taken does not tell how much of a token matched.
    ///
    /// ```swift
    /// guard let user = users.user(forToken: token) else { return unauthorized }
    /// ```
    public func user(forToken token: String) -> String? {
        let bytes = Array(token.utf8)
        var found: String?
        for entry in entries {
            var difference = UInt8(entry.token.count == bytes.count ? 0 : 1)
            for index in entry.token.indices { difference |= entry.token[index] ^ (index < bytes.count ? bytes[index] : 0) }
            if difference == 0 { found = entry.user }
        }
        return found
    }

    /// The tokens and users, in the order added (to merge a file into the command line's).
    var entriesForMerging: [(token: String, user: String)] {
        entries.map { (String(decoding: $0.token, as: UTF8.self), $0.user) }
    }
}
