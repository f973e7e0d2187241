/// Builds the JSON paths errors name (`$.mutations[2].fields["a b"]`).
enum JSONPath {
    /// The top-level value.
    static let root = "$"

    /// The path of member `name` of the object at `path`.
    static func member(_ path: String, _ name: String) -> String {
        let isPlain = !name.isEmpty && name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
        }
        return isPlain ? "\(path).\(name)" : "\(path)[\(JSONValue.string(name).encodedText)]"
    }

    /// The path of element `index` of the array at `path`.
    static func element(_ path: String, _ index: Int) -> String { "\(path)[\(index)]" }
}
