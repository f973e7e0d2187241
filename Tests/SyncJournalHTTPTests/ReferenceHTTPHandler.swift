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
/// and every reply carries the server's identity. Shared spaces are
/// served as `sync-server` serves them: a pull's `spaces`, a read's and a
/// mutation's `space` (each only with `Sync-Row-Members: space`), and the
/// membership paths.
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
        let readsSpaces = RowMembersHeader.members(in: request.headers.filter { $0.name == "sync-row-members" }.map(\.value))
            .contains(RowMembersHeader.space)
        do {
            switch SyncEndpoint(rawValue: request.path) {
            case .push:
                let mutations = try PushRequestCodec.decode(request.body)
                if !readsSpaces, mutations.contains(where: { !$0.space.isPersonal }) { return Self.spaceNotRead("$.mutations") }
                return .ok(PushReplyCodec.encode(try await server.push(user: user, mutations, expecting: expectation)))
            case .pull:
                let pull = try PullRequestCodec.decode(request.body)
                if pull.spaces != nil && !readsSpaces { return Self.spaceNotRead("$.spaces") }
                let page = try await server.pull(user: user, cursors: pull.cursors.mapValues { $0.map(PullCursorCodec.encode) },
                                                 limit: pull.limit, resync: pull.isResync, expecting: expectation, spaces: pull.spaces)
                return .ok(PullPageCodec.encode(page, includingSpaces: pull.spaces != nil))
            case .read:
                let read = try ReadRequestCodec.decode(request.body)
                if !read.space.isPersonal && !readsSpaces { return Self.spaceNotRead("$.space") }
                return .ok(ReadReplyCodec.encode(await server.read(user: user, RecordKey(kind: read.kind, id: read.id, space: read.space))))
            case .listSpaces:
                try ListSpacesRequestCodec.decode(request.body)
                return .ok(SpaceListReplyCodec.encode(await server.spaces(user: user)))
            case let endpoint? where endpoint.isMembership:
                guard let change = try SpaceChangeCodec.decode(request.body, at: endpoint) else {
                    return Self.error(404, ErrorBody(code: .notFound, message: request.path))
                }
                let space = try await server.change(user: user, change)
                return .ok(SpaceChangeReplyCodec.encode(endpoint.repliesWithSpace ? space : nil))
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

    /// The 400 for a request naming a shared space without `Sync-Row-Members: space`.
    static func spaceNotRead(_ path: String) -> ScriptedHTTPResponder.Reply {
        error(400, ErrorBody(code: .badRequest, message: "\(path) names a shared space without \(RowMembersHeader.name): \(RowMembersHeader.space)"))
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
        case .attachmentRefused(let refusal): return Self.error(refusal.httpStatus, ErrorBody(refusal: refusal))
        case .transient(let reason, let after):
            // Whole seconds, rounded up, as the header carries them.
            let headers = after.map { [("Retry-After", String(($0.components.seconds) + ($0.components.attoseconds > 0 ? 1 : 0)))] } ?? []
            return .respond(status: 503, headers: headers, body: ErrorBodyCodec.encode(ErrorBody(code: .unavailable, message: reason)))
        }
    }

    static func error(_ status: Int, _ body: ErrorBody) -> ScriptedHTTPResponder.Reply {
        .respond(status: status, headers: [("Content-Type", "application/json")], body: ErrorBodyCodec.encode(body))
    }
}
