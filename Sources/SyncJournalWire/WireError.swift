import SyncJournalProtocol

/// Why bytes are not a valid protocol message (`journals/PROTOCOL.md`):
/// either not strict JSON (with the byte offset of the problem) or JSON of
/// the wrong shape (with the JSON path of the problem, `$.mutations[2].kind`).
///
/// A server answers each with status 400 and ``errorCode`` (413 for
/// ``tooLarge(byteCount:limit:)``); a client treats a reply that fails to
/// decode as a transient error and applies nothing of it.
///
/// ```swift
/// do { _ = try PushRequestCodec.decode(body) } catch {
///     print(error.errorCode.rawValue, error)   // bad_json: duplicate member "kind" at byte 41
/// }
/// ```
public enum WireError: Error, Sendable, Hashable, CustomStringConvertible {
    // MARK: JSON syntax (byte offsets into the body)

    /// The body ended inside a value (a truncated body).
    case unexpectedEnd(offset: Int)
    /// The bytes at `offset` do not follow the JSON grammar.
    case syntax(reason: String, offset: Int)
    /// A string holds bytes that are not UTF-8 (or an over-long or surrogate encoding).
    case invalidUTF8(offset: Int)
    /// A `\u` escape names half of a surrogate pair without the other half.
    case loneSurrogate(offset: Int)
    /// An object names the same member twice (names compared as Swift strings,
    /// so canonically equivalent spellings are the same name).
    case duplicateMember(name: String, offset: Int)
    /// An integer literal (no fraction, no exponent) outside Int64.
    case integerOutOfRange(offset: Int)
    /// A number with a fraction or exponent too large for a finite double.
    case numberOutOfRange(offset: Int)
    /// Arrays and objects nest deeper than `limit`.
    case tooDeep(limit: Int, offset: Int)
    /// The body is longer than the parser accepts.
    case tooLarge(byteCount: Int, limit: Int)

    // MARK: Message shape (JSON paths)

    /// A required member is absent.
    case missingMember(path: String)
    /// A member the protocol does not define (refused, never ignored).
    case unknownMember(path: String)
    /// A value of the wrong JSON type.
    case wrongType(path: String, expected: String)
    /// A value of the right type that the protocol does not allow.
    case invalidValue(path: String, reason: String)
    /// A pull cursor that is not `UPDATEDAT:ID`.
    case badCursor(path: String, text: String)
    /// A push reply with a different number of results than mutations sent.
    case resultCountMismatch(expected: Int, received: Int)
    /// A push reply whose result at `path` answers another operation.
    case resultForAnotherOperation(path: String, expected: OperationID, received: OperationID)

    /// The byte offset of a syntax problem, `nil` for a shape problem.
    public var offset: Int? {
        switch self {
        case .unexpectedEnd(let offset), .syntax(_, let offset), .invalidUTF8(let offset), .loneSurrogate(let offset),
             .duplicateMember(_, let offset), .integerOutOfRange(let offset), .numberOutOfRange(let offset),
             .tooDeep(_, let offset):
            return offset
        default: return nil
        }
    }

    /// The JSON path of a shape problem, `nil` for a syntax problem.
    public var path: String? {
        switch self {
        case .missingMember(let path), .unknownMember(let path), .wrongType(let path, _), .invalidValue(let path, _),
             .badCursor(let path, _), .resultForAnotherOperation(let path, _, _):
            return path
        case .resultCountMismatch: return "$.results"
        default: return nil
        }
    }

    /// The protocol's `error` code a server answers this with.
    public var errorCode: ProtocolErrorCode {
        switch self {
        case .unexpectedEnd, .syntax, .invalidUTF8, .loneSurrogate, .duplicateMember, .integerOutOfRange,
             .numberOutOfRange, .tooDeep:
            return .badJSON
        case .tooLarge: return .tooLarge
        case .badCursor: return .badCursor
        case .missingMember, .unknownMember, .wrongType, .invalidValue, .resultCountMismatch, .resultForAnotherOperation:
            return .badRequest
        }
    }

    /// The HTTP status a server answers this with: 413 for a body over its
    /// limit, 400 for everything else.
    public var httpStatus: Int {
        if case .tooLarge = self { return 413 }
        return 400
    }

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .unexpectedEnd(let offset): return "the body ends inside a value at byte \(offset)"
        case .syntax(let reason, let offset): return "\(reason) at byte \(offset)"
        case .invalidUTF8(let offset): return "invalid UTF-8 at byte \(offset)"
        case .loneSurrogate(let offset): return "a lone UTF-16 surrogate escape at byte \(offset)"
        case .duplicateMember(let name, let offset): return "duplicate member \"\(name)\" at byte \(offset)"
        case .integerOutOfRange(let offset): return "an integer outside Int64 at byte \(offset)"
        case .numberOutOfRange(let offset): return "a number too large for a double at byte \(offset)"
        case .tooDeep(let limit, let offset): return "nesting deeper than \(limit) at byte \(offset)"
        case .tooLarge(let count, let limit): return "a body of \(count) bytes, at most \(limit)"
        case .missingMember(let path): return "\(path) is missing"
        case .unknownMember(let path): return "\(path) is not a member of this message"
        case .wrongType(let path, let expected): return "\(path) is not \(expected)"
        case .invalidValue(let path, let reason): return "\(path): \(reason)"
        case .badCursor(let path, let text): return "\(path): \"\(text)\" is not a cursor (UPDATEDAT:ID)"
        case .resultCountMismatch(let expected, let received): return "\(received) results for \(expected) mutations"
        case .resultForAnotherOperation(let path, let expected, let received):
            return "\(path) answers operation \(received), expected \(expected)"
        }
    }
}
