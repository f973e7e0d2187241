#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Timestamps from and to `Date`.
extension FieldValue {
    /// A timestamp for `date`, rounded once to the nearest microsecond (a date exactly halfway
    /// between two goes to the later one).
    ///
    /// The rounding is exact, so a date read back stores as the timestamp it was read from:
    /// `FieldValue.timestamp(FieldValue.timestamp(d).date!) == FieldValue.timestamp(d)` for
    /// every date `d`. Dates more than about 292 000 years from 1970 do not fit in
    /// microseconds and are clamped to the nearest one that does; a date that is not a
    /// number (NaN) stores as 1970.
    ///
    /// ```swift
    /// let created: FieldValue = .timestamp(Date(timeIntervalSince1970: 1.5))   // .timestamp(1_500_000)
    /// ```
    public static func timestamp(_ date: Date) -> FieldValue {
        .timestamp(microseconds(sinceReferenceDate: date.timeIntervalSinceReferenceDate))
    }

    /// The moment a ``timestamp(_:)-swift.enum.case`` stands for: the `Date` nearest to it
    /// (on an exact tie, either of the two); nil for any other value.
    ///
    /// A `Date` counts seconds since 2001 in a `Double`, which holds every microsecond only
    /// within about 270 years of 2001; further away nearby timestamps can share a `Date`.
    public var date: Date? {
        guard case .timestamp(let microseconds) = self else { return nil }
        let (sinceReference, overflow) = microseconds.subtractingReportingOverflow(Self.referenceDateSeconds * Self.microsecondsPerSecond)
        if !overflow && sinceReference.magnitude <= 1 << 53 {
            // The count converts exactly, so the division is the one rounding.
            return Date(timeIntervalSinceReferenceDate: Double(sinceReference) / 1_000_000)
        }
        // Far from 2001 a Date is coarser than the error of adding an exact whole count of
        // seconds to a fraction rounded once, so the sum still rounds to the nearest Date.
        let (seconds, fraction) = microseconds.quotientAndRemainder(dividingBy: Self.microsecondsPerSecond)
        return Date(timeIntervalSinceReferenceDate: Double(seconds - Self.referenceDateSeconds) + Double(fraction) / 1_000_000)
    }

    /// Microseconds since 1970 of the moment `seconds` after 2001-01-01, rounded exactly to
    /// the nearest (halfway to the later), clamped to `Int64`; NaN is 1970.
    package static func microseconds(sinceReferenceDate seconds: Double) -> Int64 {
        if seconds.isNaN { return 0 }
        let whole = seconds.rounded(.towardZero)
        guard let wholeSeconds = Int64(exactly: whole) else { return seconds < 0 ? .min : .max }
        // Dropping the whole seconds is exact, and so is the distance of the scaled fraction
        // from its nearest integer; scaling rounds once, and the fused multiply-add gives
        // that rounding's error exactly. So the nearest microsecond is chosen on the exact
        // value: only a scaled fraction that landed on a half can be on the wrong side.
        let fraction = seconds - whole
        let scaled = fraction * 1_000_000
        let error = (-scaled).addingProduct(fraction, 1_000_000)
        var micros = scaled.rounded()
        let offset = scaled - micros
        if offset == 0.5 && error >= 0 { micros += 1 }
        if offset == -0.5 && error < 0 { micros -= 1 }
        let (sinceReference, overflowA) = wholeSeconds.multipliedReportingOverflow(by: Self.microsecondsPerSecond)
        let (withFraction, overflowB) = sinceReference.addingReportingOverflow(Int64(micros))
        let (since1970, overflowC) = withFraction.addingReportingOverflow(Self.referenceDateSeconds * Self.microsecondsPerSecond)
        if overflowA || overflowB || overflowC { return seconds < 0 ? .min : .max }
        return since1970
    }

    private static let microsecondsPerSecond: Int64 = 1_000_000
    /// Seconds from 1970-01-01 to 2001-01-01, where a `Date` counts from.
    private static let referenceDateSeconds: Int64 = 978_307_200
}
