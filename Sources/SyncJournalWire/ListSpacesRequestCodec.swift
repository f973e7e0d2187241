/// The body of `POST /v1/spaces/list`: `{}`.
///
/// ```swift
/// let body = ListSpacesRequestCodec.encode()     // the client
/// try ListSpacesRequestCodec.decode(body)         // the server: refuses any member
/// ```
package enum ListSpacesRequestCodec {
    /// The request body.
    package static func encode() -> [UInt8] {
        JSONValue.object([:]).encoded()
    }

    /// Checks that a body is an empty object.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    package static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) {
        _ = try JSONObjectReader.body(body, parser: parser, allowed: [])
    }
}
