import Foundation
import Testing
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting

/// What the typed-record decoder accepts beyond the exact encoding, so that records written by
/// other versions of the app still read: whole doubles as integers, unknown enum cases, the old
/// keyed forms of URL and Decimal; and that what it reads back stores unchanged.
@Suite("Tolerant, exact decoding of typed records")
struct TolerantDecodingTests {
    enum Status: String, SyncRecordEnum, Equatable {
        case open, done, unknown
        static let unknownCase = Status.unknown
    }

    enum Priority: Int, SyncRecordEnum, Equatable {
        case low = 1, high = 9, unrecognized = 0
        static var unknownCase: Priority { .unrecognized }
    }

    struct Step: Codable, Equatable {
        var name: String
        var status: Status
    }

    struct Board: Codable, Equatable {
        var status: Status
        var maybe: Status?
        var history: [Status]
        var step: Step
        var priority: Priority
    }

    struct Chore: SyncRecord, Equatable {
        static let kind = "chore"
        var id: String
        var title: String
        var status: Status
        var steps: [Step]
    }

    struct Counter: Codable, Equatable {
        var count: Int
    }

    /// The `DecodingError.Context` of `error`, or nil (an issue) for any other error.
    static func context(_ error: any Error) -> DecodingError.Context? {
        switch error as? DecodingError {
        case .dataCorrupted(let context)?, .typeMismatch(_, let context)?, .valueNotFound(_, let context)?: return context
        case .keyNotFound(_, let context)?: return context
        default:
            Issue.record("expected a DecodingError, got \(error)")
            return nil
        }
    }

    /// The reason and path text of the error decoding `value` as a `Value`, or nil when it decodes.
    static func failure<Value: Decodable>(_ type: Value.Type, _ value: FieldValue) -> (reason: String, path: String)? {
        do {
            _ = try FieldValueDecoder().decode(type, fromValue: value)
            return nil
        } catch {
            guard let context = context(error) else { return nil }
            return (context.debugDescription, context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: "."))
        }
    }

    // MARK: Integers from doubles

    @Test("an integral double decodes into every integer type that holds it, as a property, an element and a single value")
    func integralDoubleDecodesAsInteger() throws {
        let decoder = FieldValueDecoder()
        #expect(try decoder.decode(Counter.self, from: ["count": .double(4.0)]) == Counter(count: 4))
        #expect(try decoder.decode([Int].self, fromValue: .array([.double(1), .int(2), .double(-3)])) == [1, 2, -3])
        #expect(try decoder.decode(Int.self, fromValue: .double(-0.0)) == 0)
        #expect(try decoder.decode(Int8.self, fromValue: .double(-128)) == -128)
        #expect(try decoder.decode(UInt8.self, fromValue: .double(255)) == 255)
        #expect(try decoder.decode(Int32.self, fromValue: .double(2_147_483_647)) == .max)
        #expect(try decoder.decode(UInt64.self, fromValue: .double(18_446_744_073_709_549_568)) == 18_446_744_073_709_549_568)
        #expect(try decoder.decode(Int64.self, fromValue: .double(-9_223_372_036_854_775_808)) == .min)
        #expect(try decoder.decode(Int?.self, fromValue: .double(7)) == 7)
    }

    @Test("a double with a fraction, NaN, an infinity or one out of the type's range is a DecodingError naming the value and the field")
    func nonIntegralDoubleIsRefused() throws {
        let fraction = try #require(Self.failure(Counter.self, .object(["count": .double(4.5)])))
        #expect(fraction.reason == "4.5 is not a whole number")
        #expect(fraction.path == "count")
        #expect(Self.failure(Int.self, .double(.nan))?.reason == "nan is not a whole number")
        #expect(Self.failure(Int.self, .double(.infinity))?.reason == "inf is not a whole number")
        #expect(Self.failure(Int.self, .double(-.infinity))?.reason == "-inf is not a whole number")
        #expect(Self.failure(Int64.self, .double(0.000_1))?.reason == "0.0001 is not a whole number")
        #expect(Self.failure(UInt8.self, .double(256))?.reason == "256.0 does not fit in UInt8")
        #expect(Self.failure(UInt.self, .double(-1))?.reason == "-1.0 does not fit in UInt")
        #expect(Self.failure(Int64.self, .double(9_223_372_036_854_775_808))?.reason == "9.223372036854776e+18 does not fit in Int64")
        #expect(Self.failure([Int16].self, .array([.int(1), .double(1.25)]))?.path == "[1]")
    }

    @Test("an int decodes into a double only when the double holds it exactly")
    func intDecodesAsExactDouble() throws {
        #expect(try FieldValueDecoder().decode(Double.self, fromValue: .int(9_007_199_254_740_992)) == 9_007_199_254_740_992)
        #expect(Self.failure(Double.self, .int(9_007_199_254_740_993))?.reason == "9007199254740993 has no exact double")
    }

    // MARK: Unknown enum cases

    @Test("an unknown raw value decodes as the declared unknown case in a property, an optional, an array and a nested struct")
    func unknownEnumValueDecodesAsUnknownCase() throws {
        let fields: [String: FieldValue] = [
            "status": .string("archived"),
            "maybe": .string("snoozed"),
            "history": .array([.string("open"), .string("blocked"), .string("done")]),
            "step": .object(["name": .string("review"), "status": .string("waiting")]),
            "priority": .int(5),
        ]
        let board = try FieldValueDecoder().decode(Board.self, from: fields)
        #expect(board == Board(status: .unknown, maybe: .unknown, history: [.open, .unknown, .done],
                               step: Step(name: "review", status: .unknown), priority: .unrecognized))
        #expect(try FieldValueDecoder().decode(Status.self, fromValue: .string("archived")) == .unknown)
        #expect(try FieldValueDecoder().decode(Status?.self, fromValue: .null) == nil)
    }

    @Test("a known raw value decodes as its case; a raw value of another type is still a DecodingError")
    func knownAndMistypedEnumValues() throws {
        #expect(try FieldValueDecoder().decode(Status.self, fromValue: .string("done")) == .done)
        #expect(try FieldValueDecoder().decode(Priority.self, fromValue: .double(9)) == .high)
        let mistyped = try #require(Self.failure(Board.self, .object(["status": .int(1), "history": .array([]),
                                                                      "step": .object(["name": .string("s"), "status": .string("open")]),
                                                                      "priority": .int(1)])))
        #expect(mistyped.path == "status")
        #expect(mistyped.reason == "expected a string, found int64")
    }

    @Test("a record read with an unknown enum value and saved with another change sends only that change; the stored raw value is untouched")
    func unknownEnumValueSurvivesAnUpdate() async throws {
        try await withTemporaryDirectory(prefix: "tolerant-decoding") { directory in
            let store = try await LocalStore.open(path: directory.file("tasks.journal"))
            // The record arrives from the server as a newer version wrote it.
            let steps: FieldValue = .array([.object(["name": .string("plan"), "status": .string("delegated")])])
            try await store.applyPulledPage(kind: "chore", rows: [ServerRow(kind: "chore", id: "t1", fields: [
                "title": .string("Taxes"), "status": .string("archived"), "steps": steps,
            ], updatedAt: 1)], cursor: nil)

            let read = try #require(try await store.fetch(Chore.self, id: "t1"))
            #expect(read.status == .unknown && read.steps == [Step(name: "plan", status: .unknown)])
            let edit = try #require(try await store.update(Chore.self, id: "t1") { $0.title = "Taxes 2026" })
            let queued = try #require(try await store.pendingOperations(kind: "chore", id: "t1").last?.operation)
            #expect(queued.id == edit.operation)
            #expect(queued.fields == ["title": .string("Taxes 2026")])
            let stored = try #require(try await store.record("chore", id: "t1"))
            #expect(stored.fields["status"] == .string("archived"))
            #expect(stored.fields["steps"] == steps)
            try await store.close()
        }
    }

    @Test("a changed nested field keeps the stored form of the parts the edit did not touch: an unknown enum value, a whole double, an undeclared member")
    func changedFieldKeepsUntouchedParts() throws {
        let stored: FieldValue = .array([.object(["name": .string("plan"), "status": .string("delegated"), "hours": .double(2), "owner": .string("ana")])])
        let before: FieldValue = .array([.object(["name": .string("plan"), "status": .string("unknown"), "hours": .int(2)])])
        let after: FieldValue = .array([.object(["name": .string("plan taxes"), "status": .string("unknown"), "hours": .int(2)])])
        #expect(FieldValue.keepingUntouchedParts(stored: stored, before: before, after: after)
                == .array([.object(["name": .string("plan taxes"), "status": .string("delegated"), "hours": .double(2), "owner": .string("ana")])]))
        // A part the edit did change is the edit's, even where the stored form differed.
        let done: FieldValue = .array([.object(["name": .string("plan"), "status": .string("done"), "hours": .int(3)])])
        #expect(FieldValue.keepingUntouchedParts(stored: stored, before: before, after: done)
                == .array([.object(["name": .string("plan"), "status": .string("done"), "hours": .int(3), "owner": .string("ana")])]))
        // An element added: positions no longer correspond, so the edited array is taken whole.
        let longer: FieldValue = .array([after, .string("x")].flatMap { if case .array(let elements) = $0 { return elements } else { return [$0] } })
        #expect(FieldValue.keepingUntouchedParts(stored: stored, before: before, after: longer) == longer)
        #expect(FieldValue.keepingUntouchedParts(stored: nil, before: before, after: after) == after)
    }

    // MARK: URL and Decimal

    struct Link: Codable, Equatable {
        var url: URL
        var mirrors: [URL]
    }

    @Test("a URL is stored as its absolute string and reads back from it")
    func urlIsStoredAsText() throws {
        let url = try #require(URL(string: "https://example.com/a/b?q=1#top"))
        let relative = try #require(URL(string: "c/d", relativeTo: URL(string: "https://example.com/a/")))
        let fields = try FieldValueEncoder().encode(Link(url: url, mirrors: [relative]))
        #expect(fields["url"] == .string("https://example.com/a/b?q=1#top"))
        #expect(fields["mirrors"] == .array([.string("https://example.com/a/c/d")]))
        let decoded = try FieldValueDecoder().decode(Link.self, from: fields)
        #expect(decoded.url == url)
        #expect(decoded.mirrors.map(\.absoluteString) == ["https://example.com/a/c/d"])
        #expect(Self.failure(URL.self, .string(""))?.reason == "\"\" is not a URL")
        #expect(Self.failure(URL.self, .int(1))?.reason == "expected a URL string, found int64")
    }

    @Test("a URL stored in Foundation's keyed form by an earlier version still decodes")
    func urlReadsItsKeyedForm() throws {
        let plain: FieldValue = .object(["relative": .string("https://example.com/x")])
        #expect(try FieldValueDecoder().decode(URL.self, fromValue: plain).absoluteString == "https://example.com/x")
        let withBase: FieldValue = .object(["relative": .string("b"), "base": .object(["relative": .string("https://example.com/a/")])])
        #expect(try FieldValueDecoder().decode(URL.self, fromValue: withBase).absoluteString == "https://example.com/a/b")
    }

    /// Encodes a decimal the way Foundation does on its own, as the encoder did before it stored text.
    struct FoundationDecimal: Encodable {
        var value: Decimal
        func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    }

    @Test("a Decimal is stored as its exact decimal text and reads back equal, for many decimals")
    func decimalIsStoredAsExactText() throws {
        #expect(try FieldValueEncoder().encodeValue(Decimal(string: "12.50", locale: nil)!) == .string("12.5"))
        #expect(try FieldValueEncoder().encodeValue(Decimal(string: "-0.000001", locale: nil)!) == .string("-0.000001"))
        var rng = SeededGenerator(seed: 0xDEC1)
        for _ in 0..<500 {
            let digits = (0..<Int.random(in: 1...38, using: &rng)).map { _ in String(Int.random(in: 0...9, using: &rng)) }.joined()
            let text = (Bool.random(using: &rng) ? "-" : "") + digits + "e" + String(Int.random(in: -60...60, using: &rng))
            let decimal = try #require(Decimal(string: text, locale: nil))
            let stored = try FieldValueEncoder().encodeValue(decimal)
            guard case .string = stored else { Issue.record("\(text) stored as \(stored)"); continue }
            #expect(try FieldValueDecoder().decode(Decimal.self, fromValue: stored) == decimal, "\(text)")
        }
        #expect(try FieldValueDecoder().decode(Decimal.self, fromValue: .string("NaN")).isNaN)
    }

    @Test("a Decimal reads exactly from an int, from a double's shortest text, and from Foundation's keyed form")
    func decimalReadsOtherForms() throws {
        let decoder = FieldValueDecoder()
        #expect(try decoder.decode(Decimal.self, fromValue: .int(.max)) == Decimal(string: "9223372036854775807", locale: nil)!)
        #expect(try decoder.decode(Decimal.self, fromValue: .double(0.1)) == Decimal(string: "0.1", locale: nil)!)
        #expect(try decoder.decode(Decimal.self, fromValue: .double(1e20)) == Decimal(string: "100000000000000000000", locale: nil)!)
        let price = Decimal(string: "1234.5678", locale: nil)!
        let keyed = try FieldValueEncoder().encodeValue(FoundationDecimal(value: price))
        guard case .object = keyed else { Issue.record("Foundation's form is keyed, found \(keyed)"); return }
        #expect(try decoder.decode(Decimal.self, fromValue: keyed) == price)
    }

    @Test("text that is not wholly a decimal number, and a double that is not finite, is a DecodingError")
    func decimalRefusesOtherText() throws {
        for text in ["12abc", " 12", "12 ", "", "-", ".", "1e", "1e+", "0x10", "1,5", "1e200"] {
            #expect(Self.failure(Decimal.self, .string(text))?.reason == "\"\(text)\" is not a decimal number", "\(text)")
        }
        #expect(Self.failure(Decimal.self, .double(.infinity))?.reason == "inf is not a decimal number")
        #expect(Self.failure(Decimal.self, .bool(true))?.reason == "expected a decimal string, found bool")
    }

    // MARK: Dates

    /// The timestamp `date` stores as.
    static func timestamp(_ date: Date) throws -> FieldValue { try FieldValueEncoder().encodeValue(date) }

    /// The date `value` reads back as.
    static func date(_ value: FieldValue) throws -> Date { try FieldValueDecoder().decode(Date.self, fromValue: value) }

    @Test("a date read back from its timestamp stores as the same timestamp and reads back equal, for random dates of every era")
    func dateRoundTripsAtMicroseconds() throws {
        var rng = SeededGenerator(seed: 0xDA7E)
        var dates: [Date] = [Date(timeIntervalSince1970: -1.5), Date(timeIntervalSince1970: -0.000_000_4),
                             .distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: 0.000_000_1),
                             Date(timeIntervalSinceReferenceDate: 1e12), Date(timeIntervalSinceReferenceDate: -1e12)]
        for _ in 0..<20_000 {
            // Spans from a second to about 30 000 years around 2001, so both sides of the
            // point where a Date stops holding every microsecond are covered.
            let span = [1.0, 1e6, 1e9, 1e10, 1e12][Int.random(in: 0...4, using: &rng)]
            dates.append(Date(timeIntervalSinceReferenceDate: Double.random(in: -span...span, using: &rng)))
        }
        for date in dates {
            let timestamp = try Self.timestamp(date)
            let readBack = try Self.date(timestamp)
            #expect(try Self.timestamp(readBack) == timestamp, "\(date.timeIntervalSinceReferenceDate)")
            #expect(try Self.date(Self.timestamp(readBack)) == readBack, "\(date.timeIntervalSinceReferenceDate)")
        }
    }

    @Test("every timestamp within 270 years of 2001 reads back as a date that stores as it again")
    func timestampsRoundTripNearTheReferenceDate() throws {
        var rng = SeededGenerator(seed: 0x7157)
        let reference: Int64 = 978_307_200_000_000
        let reach: Int64 = 270 * 366 * 86_400 * 1_000_000
        var timestamps: [Int64] = [0, -1, 1, reference - 1, reference + 1, reference + reach, reference - reach]
        for _ in 0..<20_000 { timestamps.append(reference + Int64.random(in: -reach...reach, using: &rng)) }
        for microseconds in timestamps {
            #expect(try Self.timestamp(Self.date(.timestamp(microseconds))) == .timestamp(microseconds), "\(microseconds)")
        }
    }

    @Test("a date is rounded once to the nearest microsecond, a date exactly halfway to the later one")
    func dateRounding() throws {
        let reference: Int64 = 978_307_200_000_000
        #expect(try Self.timestamp(Date(timeIntervalSinceReferenceDate: 0.000_000_4)) == .timestamp(reference))
        #expect(try Self.timestamp(Date(timeIntervalSinceReferenceDate: 0.000_000_6)) == .timestamp(reference + 1))
        #expect(try Self.timestamp(Date(timeIntervalSinceReferenceDate: -0.000_000_6)) == .timestamp(reference - 1))
        // 1/128 s is 7812.5 µs exactly: halfway, so the later microsecond, on both sides of 2001.
        #expect(try Self.timestamp(Date(timeIntervalSinceReferenceDate: 1.0 / 128)) == .timestamp(reference + 7_813))
        #expect(try Self.timestamp(Date(timeIntervalSinceReferenceDate: -1.0 / 128)) == .timestamp(reference - 7_812))
        // The double just below 1/128 s is just below a half, so the earlier microsecond.
        #expect(try Self.timestamp(Date(timeIntervalSinceReferenceDate: (1.0 / 128).nextDown)) == .timestamp(reference + 7_812))
        #expect(try Self.timestamp(Date(timeIntervalSince1970: -1.5)) == .timestamp(-1_500_000))
        #expect(try Self.timestamp(Date(timeIntervalSince1970: 1_764_000_000.25)) == .timestamp(1_764_000_000_250_000))
        #expect(try Self.timestamp(Date(timeIntervalSinceReferenceDate: .infinity)) == .timestamp(.max))
        #expect(try Self.timestamp(Date(timeIntervalSinceReferenceDate: -1e300)) == .timestamp(.min))
        #expect(try Self.date(.timestamp(reference + 1)).timeIntervalSinceReferenceDate == 0.000_001)
        #expect(try Self.date(.timestamp(-1_500_000)).timeIntervalSince1970 == -1.5)
    }
}
