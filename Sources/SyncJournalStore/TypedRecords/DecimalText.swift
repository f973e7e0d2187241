#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The text a `Decimal` is stored as, read back strictly: `Decimal(string:)` alone would
/// read the leading number of `"12abc"` or `" 12"`, and a stored value is either all
/// number or not one.
enum DecimalText {
    /// The decimal `text` spells: an optional minus sign, digits with at most one point
    /// between or around them, an optional exponent (`e` or `E`, a sign, digits); or `NaN`.
    static func decimal(_ text: String) -> Decimal? {
        if text == "NaN" { return .nan }
        guard isNumber(Array(text.utf8)) else { return nil }
        return Decimal(string: text, locale: nil)
    }

    private static func isNumber(_ bytes: [UInt8]) -> Bool {
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - start
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
        var mantissaDigits = digits()
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            mantissaDigits += digits()
        }
        guard mantissaDigits > 0 else { return false }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
            guard digits() > 0 else { return false }
        }
        return index == bytes.count
    }
}
