import SyncJournalProtocol

/// The HTTP headers of server identities (journals/PROTOCOL.md, "Server
/// identity"): a device sends ``identity`` and ``seenStamp`` with its
/// pushes and pulls once it knows its server; every reply carries ``identity``.
///
/// ```swift
/// let expectation = try ServerIdentityHeaders.expectation(identities: ["server-a"], seenStamps: ["1764000000123"])
/// ```
public enum ServerIdentityHeaders {
    /// `Sync-Server-Identity`: on a request, the identity the device expects;
    /// on a reply, the server's own.
    public static let identity = "Sync-Server-Identity"
    /// `Sync-Seen-Stamp`: the latest stamp the device pulled from that server
    /// (a decimal integer).
    public static let seenStamp = "Sync-Seen-Stamp"

    /// Why a request's identity headers do not parse.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// One line naming the header.
        public let description: String
    }

    /// The headers that state `expectation`, as name and value.
    ///
    /// ```swift
    /// for (name, value) in ServerIdentityHeaders.headers(for: expectation) { request.setValue(value, forHTTPHeaderField: name) }
    /// ```
    public static func headers(for expectation: ServerExpectation) -> [(name: String, value: String)] {
        var headers = [(name: identity, value: expectation.identity.text)]
        if let stamp = expectation.seenStamp { headers.append((seenStamp, String(stamp))) }
        return headers
    }

    /// The expectation the values of the two headers state (`nil`: no
    /// identity header, a device from before identities or one that has
    /// not synced yet).
    ///
    /// - Throws: ``Problem`` for a header given twice, an identity that is
    ///   not one, a stamp that is not a decimal integer, or a stamp without an identity.
    public static func expectation(identities: [String], seenStamps: [String]) throws(Problem) -> ServerExpectation? {
        if identities.count > 1 { throw Problem(description: "\(identity) given \(identities.count) times, at most once") }
        if seenStamps.count > 1 { throw Problem(description: "\(seenStamp) given \(seenStamps.count) times, at most once") }
        var stamp: Int64?
        if let text = seenStamps.first {
            guard let parsed = parseStamp(text) else {
                throw Problem(description: "\(seenStamp): \"\(text.prefix(40))\" is not a decimal integer stamp")
            }
            stamp = parsed
        }
        guard let text = identities.first else {
            if stamp != nil { throw Problem(description: "\(seenStamp) needs \(identity)") }
            return nil
        }
        guard let found = ServerIdentity(text) else {
            throw Problem(description: "\(identity): \"\(text.prefix(80))\" is not a server identity (1 to \(ServerIdentity.maximumLength) of A-Z a-z 0-9 - _)")
        }
        return ServerExpectation(identity: found, seenStamp: stamp)
    }

    /// The server identity a reply's header names, or `nil` when it names
    /// none or one that is not an identity.
    ///
    /// ```swift
    /// let server = ServerIdentityHeaders.identity(in: response.value(forHTTPHeaderField: ServerIdentityHeaders.identity))
    /// ```
    public static func identity(in value: String?) -> ServerIdentity? {
        value.flatMap { ServerIdentity(String(trimmingSpaces($0))) }
    }

    /// `text` without leading and trailing spaces and tabs.
    private static func trimmingSpaces(_ text: String) -> Substring {
        var text = Substring(text)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }

    /// An optional `-` and 1 to 19 ASCII digits, within `Int64`.
    private static func parseStamp(_ text: String) -> Int64? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.count <= 19, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(text)
    }
}
