import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting
import SyncJournalWire

/// A minimal HTTP face for a ``ReferenceServer``, for the responder: it
/// answers requests as PROTOCOL.md says, with the Wire codecs, so the
/// transport can be tested end to end with the engine. Each
/// ``TransportError`` the reference server throws goes out as the status the
/// protocol gives it, so a round trip should classify it the same way.
/// Like `sync-server`, it reads the device's expectation from the
/// `Sync-Server-Identity` and `Sync-Seen-Stamp` headers of pushes and pulls,
/// and every reply carries the server's identity.
struct ReferenceHTTPHandler: Sendable {
    let server: ReferenceServer
    /// Bearer tokens and the users they stand for.
    let users: [String: String]

    func reply(_ request: ScriptedHTTPResponder.Request) async -> ScriptedHTTPResponder.Reply {
        let identity = await server.identity
        return Self.identified(await answer(request), identity)
    }

    /// `reply` with the server's identity header, when it has one.
    static func identified(_ reply: ScriptedHTTPResponder.Reply, _ identity: ServerIdentity?) -> ScriptedHTTPResponder.Reply {
        guard let identity, case .respond(let status, let headers, let body) = reply else { return reply }
        return .respond(status: status, headers: headers + [(ServerIdentityHeaders.identity, identity.text)], body: body)
    }

    private func answer(_ request: ScriptedHTTPResponder.Request) async -> ScriptedHTTPResponder.Reply {
        guard let authorization = request.header("Authorization"), authorization.hasPrefix("Bearer "),
              let user = users[String(authorization.dropFirst("Bearer ".count))] else {
            return Self.error(401, ErrorBody(code: .unauthorized, message: "unknown token"))
        }
        guard request.method == "POST" else { return Self.error(405, ErrorBody(code: .methodNotAllowed, message: request.method)) }
        let expectation: ServerExpectation?
        do {
            expectation = try ServerIdentityHeaders.expectation(identities: request.headers.filter { $0.name == "sync-server-identity" }.map(\.value),
                                                                seenStamps: request.headers.filter { $0.name == "sync-seen-stamp" }.map(\.value))
        } catch {
            return Self.error(400, ErrorBody(code: .badRequest, message: error.description))
        }
        do {
            switch request.path {
            case SyncEndpoint.push.path:
                let mutations = try PushRequestCodec.decode(request.body)
                return .ok(PushReplyCodec.encode(try await server.push(user: user, mutations, expecting: expectation)))
            case SyncEndpoint.pull.path:
                let pull = try PullRequestCodec.decode(request.body)
                let page = try await server.pull(user: user, cursors: pull.cursors.mapValues { $0.map(PullCursorCodec.encode) },
                                                 limit: pull.limit, resync: pull.isResync, expecting: expectation)
                return .ok(PullPageCodec.encode(page))
            case SyncEndpoint.read.path:
                let read = try ReadRequestCodec.decode(request.body)
                return .ok(ReadReplyCodec.encode(await server.read(user: user, kind: read.kind, id: read.id)))
            default:
                return Self.error(404, ErrorBody(code: .notFound, message: request.path))
            }
        } catch let error as WireError {
            return Self.error(error.httpStatus, ErrorBody(error))
        } catch let error as TransportError {
            return Self.reply(error)
        } catch {
            return Self.error(500, ErrorBody(code: .internal, message: "\(error)"))
        }
    }

    /// The reply PROTOCOL.md's error table gives `error`.
    static func reply(_ error: TransportError) -> ScriptedHTTPResponder.Reply {
        switch error {
        case .offline, .serverUnreachable: return .close
        case .unauthorized(let reason): return Self.error(401, ErrorBody(code: .unauthorized, message: reason))
        case .permanent(let reason): return Self.error(400, ErrorBody(code: .badRequest, message: reason))
        case .tooLarge(let reason): return Self.error(413, ErrorBody(code: .tooLarge, message: reason))
        case .cursorExpired(let kinds): return Self.error(410, ErrorBody(code: .cursorExpired, message: "resync", kinds: kinds))
        case .serverMismatch(let mismatch): return Self.error(409, ErrorBody(mismatch: mismatch))
        case .spaceRefused(let refusal): return Self.error(refusal.httpStatus, ErrorBody(refusal: refusal))
        case .transient(let reason, let after):
            let headers = after.map { [("Retry-After", String(($0 + 999) / 1000))] } ?? []
            return .respond(status: 503, headers: headers, body: ErrorBodyCodec.encode(ErrorBody(code: .unavailable, message: reason)))
        }
    }

    static func error(_ status: Int, _ body: ErrorBody) -> ScriptedHTTPResponder.Reply {
        .respond(status: status, headers: [("Content-Type", "application/json")], body: ErrorBodyCodec.encode(body))
    }
}
