/// The rules every field list must follow before it is journaled or stored.
extension FieldValue {
    /// What is wrong with `fields`, or nil: an empty field name, a value whose arrays and
    /// objects nest more than ``maximumNestingDepth`` deep, an object member with an
    /// empty name, or an attachment with a ``Attachment/problem`` (every decoder refuses
    /// each of these).
    package static func problem(in fields: [String: FieldValue]) -> String? {
        if fields.keys.contains(where: \.isEmpty) { return "empty field name" }
        // Every edit is checked: scalars, the common case, cost one switch each and
        // no sorting; the names are sorted only to report the first problem by name.
        var problems: [(name: String, problem: String)] = []
        for (name, value) in fields {
            let depth = value.nestingDepth
            if depth > maximumNestingDepth {
                problems.append((name, "field \"\(name)\" nests arrays and objects more than \(maximumNestingDepth) deep"))
            } else if depth > 0, value.hasEmptyMemberName {
                problems.append((name, "field \"\(name)\" holds an object member with an empty name"))
            } else if let problem = value.attachmentProblem {
                // Journaled, it would make the journal unreadable: the reader refuses it as malformed.
                problems.append((name, "field \"\(name)\": \(problem)"))
            }
        }
        return problems.min { $0.name < $1.name }?.problem
    }

    /// The problem of an attachment in this value that has one, or nil.
    private var attachmentProblem: String? {
        switch self {
        case .attachment(let attachment): return attachment.problem
        case .array(let elements): return elements.lazy.compactMap(\.attachmentProblem).first
        case .object(let members): return members.values.lazy.compactMap(\.attachmentProblem).first
        default: return nil
        }
    }

    /// Whether an object anywhere inside this value has a member with an empty name.
    private var hasEmptyMemberName: Bool {
        switch self {
        case .array(let elements): return elements.contains { $0.hasEmptyMemberName }
        case .object(let members): return members.contains { $0.key.isEmpty || $0.value.hasEmptyMemberName }
        default: return false
        }
    }
}
