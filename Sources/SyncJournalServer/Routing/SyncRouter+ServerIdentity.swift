import SyncJournalProtocol
import SyncJournalWire

/// The server's identity on the wire (journals/PROTOCOL.md, "Server identity").
extension SyncRouter {
    /// The reply header naming the server's database, on every reply; and
    /// the request header by which a device names the server it expects.
    public static let serverIdentityHeader = ServerIdentityHeaders.identity
    /// The request header carrying the latest stamp the device pulled from
    /// the server it expects.
    public static let seenStampHeader = ServerIdentityHeaders.seenStamp

    /// The headers every reply carries: the storage's identity, if it has one.
    var identityHeaders: [HTTPHeader] {
        storage.identity.map { [HTTPHeader(name: Self.serverIdentityHeader, value: $0.text)] } ?? []
    }

    /// `response` with `headers` added.
    static func adding(_ headers: [HTTPHeader], to response: HTTPResponse) -> HTTPResponse {
        guard !headers.isEmpty else { return response }
        var response = response
        response.headers += headers
        return response
    }

    /// What the request expects of the server, from its headers: `nil`
    /// without ``serverIdentityHeader``.
    ///
    /// - Throws: ``RouteFailure/badHeader(_:)`` (400 `bad_request`) for a
    ///   header given twice, an identity or stamp that does not parse, or a
    ///   seen stamp without an identity.
    static func expectation(of request: HTTPRequest) throws(RouteFailure) -> ServerExpectation? {
        let identities = request.headers.filter { $0.hasName(serverIdentityHeader) }.map(\.value)
        let stamps = request.headers.filter { $0.hasName(seenStampHeader) }.map(\.value)
        do throws(ServerIdentityHeaders.Problem) {
            return try ServerIdentityHeaders.expectation(identities: identities, seenStamps: stamps)
        } catch {
            throw .badHeader(error.description)
        }
    }
}
