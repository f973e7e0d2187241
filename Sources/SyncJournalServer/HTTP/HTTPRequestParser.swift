/// Parses a request's head (request line and header fields) from the bytes
/// received so far, strictly (RFC 9112): CRLF line ends, no whitespace
/// before a colon, no folded lines, one `Content-Length` of digits only.
///
/// ```swift
/// let parser = HTTPRequestParser(configuration: HTTPServerConfiguration())
/// switch parser.parseHead(buffer) {
/// case .incomplete: readMore()
/// case .head(let head): waitForBody(head.contentLength)
/// case .failure(let failure): answer(failure)
/// }
/// ```
struct HTTPRequestParser: Sendable {
    let configuration: HTTPServerConfiguration

    /// A parsed head.
    struct Head: Sendable {
        var request: HTTPRequest
        /// Bytes of the head, up to and including the blank line.
        var length: Int
        var contentLength: Int
        var expectsContinue: Bool
    }

    enum Step: Sendable {
        case incomplete
        case head(Head)
        case failure(HTTPRequestFailure)
    }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")

    /// The bytes before the request line that RFC 9112 says to skip (empty lines).
    static func leadingEmptyLines(_ buffer: [UInt8]) -> Int {
        var index = 0
        while index + 1 < buffer.count, buffer[index] == cr, buffer[index + 1] == lf { index += 2 }
        return index
    }

    func parseHead(_ buffer: [UInt8]) -> Step {
        // The blank line ending the head, searched only within the limit.
        let searchEnd = min(buffer.count, configuration.maximumHeaderBytes + 4)
        var end: Int?
        var lineEnd: Int?
        var index = 0
        while index + 1 < searchEnd {
            if buffer[index] == Self.cr && buffer[index + 1] == Self.lf {
                if lineEnd == nil { lineEnd = index }
                if index + 3 < buffer.count, buffer[index + 2] == Self.cr, buffer[index + 3] == Self.lf {
                    end = index
                    break
                }
            }
            index += 1
        }
        if (lineEnd ?? buffer.count) > configuration.maximumRequestLineBytes {
            return .failure(.requestLineTooLong(limit: configuration.maximumRequestLineBytes))
        }
        guard let end else {
            // A request line that is whole but wrong fails now, not after the read timeout.
            if let lineEnd, case .failure(let failure) = Self.parseRequestLine(buffer[0..<lineEnd]) {
                return .failure(failure)
            }
            // So does a partial one with a byte no request line holds (binary garbage).
            let partialLine = buffer[0..<(lineEnd ?? searchEnd)]
            if partialLine.contains(where: { ($0 < 0x20 && $0 != Self.cr) || $0 >= 0x7F }) {
                return .failure(.malformed("the request line holds a control or non-ASCII byte"))
            }
            if buffer.count > configuration.maximumHeaderBytes {
                return .failure(.headersTooLarge("the request head is over \(configuration.maximumHeaderBytes) bytes"))
            }
            return .incomplete
        }
        if end > configuration.maximumHeaderBytes {
            return .failure(.headersTooLarge("the request head is over \(configuration.maximumHeaderBytes) bytes"))
        }
        let lines = Self.lines(buffer[0..<end])
        guard let requestLine = lines.first else { return .failure(.malformed("empty request line")) }
        let fieldLines = lines.dropFirst()
        if fieldLines.count > configuration.maximumHeaderCount {
            return .failure(.headersTooLarge("\(fieldLines.count) header fields, at most \(configuration.maximumHeaderCount)"))
        }
        let method: String, target: String, isHTTP10: Bool
        switch Self.parseRequestLine(requestLine) {
        case .success(let parsed): (method, target, isHTTP10) = parsed
        case .failure(let failure): return .failure(failure)
        }
        var headers: [HTTPHeader] = []
        headers.reserveCapacity(fieldLines.count)
        for line in fieldLines {
            switch Self.parseField(line) {
            case .success(let header): headers.append(header)
            case .failure(let failure): return .failure(failure)
            }
        }
        var request = HTTPRequest(method: method, target: target, isHTTP10: isHTTP10, headers: headers)
        if !isHTTP10 && !headers.contains(where: { $0.hasName("host") }) {
            return .failure(.malformed("an HTTP/1.1 request needs a Host header"))
        }
        if headers.contains(where: { $0.hasName("transfer-encoding") }) {
            return .failure(.lengthRequired("Transfer-Encoding (chunked) bodies are not taken; send Content-Length"))
        }
        let lengths = headers.filter { $0.hasName("content-length") }.map(\.value)
        var contentLength = 0
        if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }) else { return .failure(.malformed("conflicting Content-Length headers")) }
            guard !first.isEmpty, first.utf8.count <= 18, first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(first) else {
                return .failure(.malformed("Content-Length is not a decimal number: \(first.prefix(40))"))
            }
            contentLength = value
        } else if method == "POST" || method == "PUT" || method == "PATCH" {
            return .failure(.lengthRequired("a \(method) request needs a Content-Length header"))
        }
        if contentLength > configuration.maximumBodyBytes {
            return .failure(.bodyTooLarge(length: contentLength, limit: configuration.maximumBodyBytes))
        }
        let expectation = request.header("expect")?.lowercased()
        request.body = []
        return .head(Head(request: request, length: end + 4, contentLength: contentLength,
                          expectsContinue: !isHTTP10 && expectation == "100-continue"))
    }

    private static func lines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == cr, index + 1 < bytes.endIndex, bytes[index + 1] == lf {
                lines.append(bytes[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(bytes[start..<bytes.endIndex])
        return lines
    }

    /// RFC 9110 `tchar`: the characters of methods and field names.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) -> Result<(String, String, Bool), HTTPRequestFailure> {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(.malformed("the request line is not METHOD TARGET VERSION")) }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else { return .failure(.malformed("bad method")) }
        guard let first = target.first, first == UInt8(ascii: "/") || (target.count == 1 && first == UInt8(ascii: "*")),
              target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(.malformed("bad request target"))
        }
        let versionText = String(decoding: version, as: UTF8.self)
        let isHTTP10: Bool
        switch versionText {
        case "HTTP/1.1": isHTTP10 = false
        case "HTTP/1.0": isHTTP10 = true
        default:
            let digit = { (byte: UInt8) in byte >= 0x30 && byte <= 0x39 }
            let bytes = Array(version)
            if bytes.count == 8, versionText.hasPrefix("HTTP/"), digit(bytes[5]), bytes[6] == UInt8(ascii: "."), digit(bytes[7]) {
                return .failure(.versionNotSupported(versionText))
            }
            return .failure(.malformed("bad HTTP version"))
        }
        return .success((String(decoding: method, as: UTF8.self), String(decoding: target, as: UTF8.self), isHTTP10))
    }

    private static func parseField(_ line: ArraySlice<UInt8>) -> Result<HTTPHeader, HTTPRequestFailure> {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            return .failure(.malformed("a header line without a colon"))
        }
        let name = line[line.startIndex..<colon]
        // Also refuses folded lines (they start with whitespace) and whitespace before the colon.
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { return .failure(.malformed("bad header name")) }
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        // Field values: visible characters, spaces, tabs and obs-text; no other control bytes.
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            return .failure(.malformed("a control character in a header value"))
        }
        return .success(HTTPHeader(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
    }
}
