@testable import JournalDumpTool
import Testing

/// `journal-dump` prints instants in the proleptic Gregorian calendar, so a
/// date before October 1582 reads as ISO 8601 reads it, not as the Julian
/// date a system calendar would switch to.
@Suite("Dates in journal-dump")
struct CivilTimeTests {
    @Test("Known instants print as ISO 8601 in the proleptic Gregorian calendar, before and after the epoch",
          arguments: [
            (Int64(0), "1970-01-01T00:00:00.000000Z"),
            (-1, "1969-12-31T23:59:59.999999Z"),
            (951_782_400_000_000, "2000-02-29T00:00:00.000000Z"),
            // The day before the Gregorian reform took effect: 1582-10-04 in the Julian calendar.
            (-12_219_379_200_000_000, "1582-10-14T00:00:00.000000Z"),
            (-62_135_596_800_000_000, "0001-01-01T00:00:00.000000Z"),
            (-62_167_219_200_000_000, "0000-01-01T00:00:00.000000Z"),
            (-62_167_219_200_000_001, "-0001-12-31T23:59:59.999999Z"),
            (253_402_300_800_000_000, "+10000-01-01T00:00:00.000000Z"),
          ])
    func knownInstants(microseconds: Int64, text: String) {
        #expect(CivilTime.iso8601(microseconds: microseconds) == text)
    }

    @Test("Milliseconds print with three digits")
    func milliseconds() {
        #expect(CivilTime.iso8601(milliseconds: 1_700_000_000_123) == "2023-11-14T22:13:20.123Z")
    }

    @Test("Every day for 800 years either side of the epoch follows the day before it")
    func consecutiveDays() {
        var previous = CivilTime.civilDate(daysSinceEpoch: -292_195)
        var wrong: [Int64] = []
        for day in Int64(-292_194)...292_194 {
            let date = CivilTime.civilDate(daysSinceEpoch: day)
            let leap = previous.year % 4 == 0 && (previous.year % 100 != 0 || previous.year % 400 == 0)
            let lengths: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            let expected: (Int64, Int64, Int64)
            if previous.day < lengths[Int(previous.month - 1)] {
                expected = (previous.year, previous.month, previous.day + 1)
            } else if previous.month < 12 {
                expected = (previous.year, previous.month + 1, 1)
            } else {
                expected = (previous.year + 1, 1, 1)
            }
            if date != expected { wrong.append(day) }
            previous = date
        }
        #expect(wrong.isEmpty, "days \(wrong.prefix(5))")
    }

    @Test("The extremes of a stored timestamp print without trapping")
    func extremes() {
        #expect(CivilTime.iso8601(microseconds: .min).hasPrefix("-"))
        #expect(CivilTime.iso8601(microseconds: .max).hasPrefix("+"))
    }
}
