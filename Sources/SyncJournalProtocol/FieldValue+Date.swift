#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Timestamps from and to `Date`.
extension FieldValue {
    /// A timestamp for `date`, rounded to the nearest microsecond.
    ///
    /// Dates more than about 292 000 years from 1970 do not fit in microseconds and are
    /// clamped to the nearest one that does.
    ///
    /// ```swift
    /// let created: FieldValue = .timestamp(Date(timeIntervalSince1970: 1.5))   // .timestamp(1_500_000)
    /// ```
    public static func timestamp(_ date: Date) -> FieldValue {
        .timestamp(microseconds(since1970: date.timeIntervalSince1970))
    }

    /// The moment a ``timestamp(_:)-swift.enum.case`` stands for; nil for any other value.
    public var date: Date? {
        guard case .timestamp(let microseconds) = self else { return nil }
        return Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }

    /// `seconds` since 1970 in whole microseconds, rounded to the nearest, clamped to `Int64`.
    package static func microseconds(since1970 seconds: Double) -> Int64 {
        let scaled = (seconds * 1_000_000).rounded()
        if scaled.isNaN { return 0 }
        if scaled >= 9_223_372_036_854_775_807.0 { return .max }
        if scaled <= -9_223_372_036_854_775_808.0 { return .min }
        return Int64(scaled)
    }
}
