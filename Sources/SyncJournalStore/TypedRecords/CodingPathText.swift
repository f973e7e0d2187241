/// Coding paths written for people: `address.city`, `scores[2]`, and an empty string for the record itself.
enum CodingPathText {
    /// `path` as text.
    static func text(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                if !text.isEmpty { text += "." }
                text += key.stringValue
            }
        }
        return text
    }
}
