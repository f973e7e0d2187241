import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SyncJournalProtocol
import SyncJournalWire

/// The protocol's error table (`journals/PROTOCOL.md`, "Errors"): what a
/// failed exchange means to the sync engine.
enum TransportErrorClassifier {
    /// A session error: no network is `.offline` (the request never left); a
    /// refused connection or a timeout is `.serverUnreachable` (a timed-out
    /// request may have reached the server: the engine retries it as it
    /// retries a transient error); anything else is transient.
    static func classify(_ error: Error) -> TransportError {
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else {
            return .transient(reason: "request failed: \(nsError.localizedDescription)", retryAfter: nil)
        }
        switch URLError.Code(rawValue: nsError.code) {
        case .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
             .internationalRoamingOff, .dataNotAllowed, .callIsActive:
            return .offline
        case .cannotConnectToHost:
            return .serverUnreachable(reason: "connection refused")
        case .timedOut:
            return .serverUnreachable(reason: "timed out")
        case .networkConnectionLost:
            return .transient(reason: "connection lost", retryAfter: nil)
        case .badURL, .unsupportedURL:
            return .permanent(reason: "bad URL: \(nsError.localizedDescription)")
        default:
            return .transient(reason: "request failed (\(nsError.code)): \(nsError.localizedDescription)", retryAfter: nil)
        }
    }

    /// A reply whose status is not 200.
    ///
    /// - Parameters:
    ///   - retryAfter: the `Retry-After` header, honoured in its seconds form.
    ///   - body: the reply body, an ``ErrorBody`` when the server follows the protocol.
    ///   - pulledKinds: a pull's kinds, named by a 410 whose body does not name them
    ///     (re-pulling every kind is always safe, only slower).
    ///
    /// A membership refusal whose code goes with the status (404
    /// `no_such_space`, 403 `forbidden`, …) is `.spaceRefused`; any other
    /// 404 to a membership path comes from a server without spaces and is
    /// `.permanent`, saying so. An attachment refusal (409 `wrong_offset`,
    /// 413 `too_large` or `quota_exceeded`, 422, 404 `no_such_content`) is
    /// `.attachmentRefused`; another 404 to an attachment path comes from a
    /// server without attachments.
    static func classify(status: Int, retryAfter: String?, body: [UInt8], endpoint: SyncEndpoint, pulledKinds: [String]) -> TransportError {
        let errorBody = try? ErrorBodyCodec.decode(body)
        let detail = "HTTP \(status) from \(endpoint.path)" + (errorBody.map { ": \($0.code) (\($0.message))" } ?? "")
        if let refusal = errorBody?.refusal, refusal.httpStatus == status { return .spaceRefused(refusal) }
        if endpoint.isAttachment, let refusal = errorBody?.attachmentRefusal(toUpload: endpoint == .uploadAttachment),
           refusal.httpStatus == status {
            return .attachmentRefused(refusal)
        }
        switch status {
        case 404 where endpoint.isMembership:
            return .permanent(reason: "the server has no shared spaces (\(detail))")
        case 404 where endpoint.isAttachment:
            return .permanent(reason: "the server carries no attachments (\(detail))")
        case 409:
            return serverMismatch(body: body, detail: detail, endpoint: endpoint)
        case 410 where endpoint == .pull:
            return .cursorExpired(kinds: expiredKinds(errorBody) ?? pulledKinds)
        case 401:
            return .unauthorized(reason: detail)
        case 413:
            return .tooLarge(reason: detail)
        case 408:
            // The request did not reach the server whole, so nothing of it was applied.
            return .transient(reason: detail, retryAfter: retryAfterDelay(retryAfter))
        case 429, 500...599:
            return .transient(reason: detail, retryAfter: retryAfterDelay(retryAfter))
        case 300...399:
            return .permanent(reason: detail + ", a redirect (not followed)")
        case 400...499:
            return .permanent(reason: detail)
        default:
            // 1xx, another 2xx, or no status HTTP defines: the server is not following the protocol.
            return .transient(reason: detail + ", not a status of the protocol", retryAfter: nil)
        }
    }

    /// A 409: a `server_mismatch` whose body says which (the server applied
    /// nothing), or, when the body does not decode or says neither case, a
    /// permanent error naming the malformed reply: retrying would not help,
    /// and guessing a mismatch could send the app reconciling for nothing.
    static func serverMismatch(body: [UInt8], detail: String, endpoint: SyncEndpoint) -> TransportError {
        let errorBody: ErrorBody
        do {
            errorBody = try ErrorBodyCodec.decode(body)
        } catch {
            return .permanent(reason: "HTTP 409 from \(endpoint.path) with a malformed error body: \(error)")
        }
        guard errorBody.code == .serverMismatch else { return .permanent(reason: detail) }
        guard let mismatch = errorBody.mismatch else {
            return .permanent(reason: "HTTP 409 server_mismatch from \(endpoint.path) whose body names neither another server "
                              + "(expected, found) nor one behind the device (found, seenStamp, latestStamp)")
        }
        return .serverMismatch(mismatch)
    }

    /// The kinds a `cursor_expired` body names: the personal space's as
    /// given, then those only shared spaces name, each once, in name order;
    /// `nil` when it names none. The engine re-pulls each such kind in
    /// every space: a resync of a kind is always safe, and a per-space one
    /// would need an error the engine does not have.
    static func expiredKinds(_ body: ErrorBody?) -> [String]? {
        var kinds = body?.kinds ?? []
        var named = Set(kinds)
        let shared = Set((body?.spaceKinds ?? [:]).values.joined()).sorted()
        for kind in shared where named.insert(kind).inserted { kinds.append(kind) }
        return kinds.isEmpty ? nil : kinds
    }

    /// `Retry-After` in its delay-seconds form (`120`); the HTTP-date form
    /// and anything else are ignored (`nil`).
    static func retryAfterDelay(_ header: String?) -> Duration? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty, text.utf8.count <= 18,
              text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let seconds = Int64(text) else { return nil }
        return .seconds(seconds)
    }
}
