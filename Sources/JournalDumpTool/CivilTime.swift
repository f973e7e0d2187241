/// Dates as `journal-dump` prints them: UTC, in the proleptic Gregorian
/// calendar (the Gregorian rules carried back before 1582, year 0 included,
/// as ISO 8601 does), worked out from the count of days so that no system
/// calendar (Foundation's switches to the Julian calendar before October
/// 1582) changes what a stored instant reads as.
enum CivilTime {
    /// `2025-11-24T16:00:00.000001Z` for microseconds since the epoch.
    static func iso8601(microseconds: Int64) -> String {
        format(units: microseconds, perSecond: 1_000_000, fractionDigits: 6)
    }

    /// `2025-11-24T16:00:00.000Z` for milliseconds since the epoch.
    static func iso8601(milliseconds: Int64) -> String {
        format(units: milliseconds, perSecond: 1_000, fractionDigits: 3)
    }

    private static func format(units: Int64, perSecond: Int64, fractionDigits: Int) -> String {
        let perDay = perSecond * 86_400
        // Floor division, so instants before the epoch fall on the day they belong to.
        var days = units / perDay
        var within = units % perDay
        if within < 0 { days -= 1; within += perDay }
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let seconds = within / perSecond
        let fraction = within % perSecond
        return "\(yearText(year))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):"
            + "\(pad(seconds % 60, 2)).\(pad(fraction, fractionDigits))Z"
    }

    /// The year, month and day of a day counted from 1970-01-01. The
    /// calendar repeats every 400 years (146,097 days); counting from
    /// 0000-03-01 puts each leap day at the end of its year.
    static func civilDate(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = daysSinceEpoch + 719_468 // days from 0000-03-01 to 1970-01-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Four digits, with a sign outside 0000...9999 (ISO 8601's expanded years).
    private static func yearText(_ year: Int64) -> String {
        if year < 0 { return "-" + pad(-year, 4) }
        if year > 9_999 { return "+" + String(year) }
        return pad(year, 4)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
