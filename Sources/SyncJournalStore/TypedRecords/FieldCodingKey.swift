/// A coding key made from a field or member name, or from an array position.
struct FieldCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }

    /// The key of the `index`th element of an array.
    static func index(_ index: Int) -> FieldCodingKey { FieldCodingKey(intValue: index) }
}
