import Foundation
import Testing
import SyncJournalProtocol
import SyncJournalStore

/// FieldValueEncoder and FieldValueDecoder: every supported Swift type, optionals, and the
/// errors with their coding paths.
@Suite("FieldValueEncoder and FieldValueDecoder")
struct FieldValueCodableTests {
    enum Mood: String, Codable, Equatable { case happy, sad }
    enum Level: Int, Codable, Equatable { case low = 1, high = 9 }

    struct Address: Codable, Equatable {
        var city: String
        var zip: String?
    }

    struct Everything: Codable, Equatable {
        var int: Int
        var int64: Int64
        var int8: Int8
        var uint32: UInt32
        var double: Double
        var float: Float
        var bool: Bool
        var string: String
        var data: Data
        var date: Date
        var uuid: UUID
        var tags: Set<String>
        var scores: [Int]
        var matrix: [[Double]]
        var address: Address
        var addresses: [Address]
        var byName: [String: Int]
        var mood: Mood
        var level: Level
        var note: String?
        var missing: Int?
    }

    static let everything = Everything(
        int: -5, int64: .min, int8: -128, uint32: .max, double: 2.5, float: 0.5, bool: true, string: "grüße",
        data: Data([0, 1, 255]), date: Date(timeIntervalSince1970: 1_764_000_000.25), uuid: UUID(uuidString: "ce56971c-de35-4897-821e-fc0b1046c8bf")!,
        tags: ["b", "a"], scores: [3, 1, 2], matrix: [[1.5], []], address: Address(city: "Munich", zip: "80331"),
        addresses: [Address(city: "Rome", zip: nil)], byName: ["x": 1], mood: .happy, level: .high, note: "n", missing: nil)

    @Test("every supported type encodes to the documented field value")
    func encodesEveryType() throws {
        let fields = try FieldValueEncoder().encode(Self.everything)
        #expect(fields["int"] == .int(-5))
        #expect(fields["int64"] == .int(.min))
        #expect(fields["int8"] == .int(-128))
        #expect(fields["uint32"] == .int(4_294_967_295))
        #expect(fields["double"] == .double(2.5))
        #expect(fields["float"] == .double(0.5))
        #expect(fields["bool"] == .bool(true))
        #expect(fields["string"] == .string("grüße"))
        #expect(fields["data"] == .bytes([0, 1, 255]))
        #expect(fields["date"] == .timestamp(1_764_000_000_250_000))
        #expect(fields["uuid"] == .uuid(Self.everything.uuid))
        #expect(fields["tags"] == .stringSet(["a", "b"]))
        #expect(fields["scores"] == .array([.int(3), .int(1), .int(2)]))
        #expect(fields["matrix"] == .array([.array([.double(1.5)]), .array([])]))
        #expect(fields["address"] == .object(["city": .string("Munich"), "zip": .string("80331")]))
        #expect(fields["addresses"] == .array([.object(["city": .string("Rome"), "zip": .null])]))
        #expect(fields["byName"] == .object(["x": .int(1)]))
        #expect(fields["mood"] == .string("happy"))
        #expect(fields["level"] == .int(9))
        #expect(fields["note"] == .string("n"))
        #expect(fields["missing"] == .null, "nil is stored as null, so clearing a field is an edit of it")
        #expect(fields.count == 21)
    }

    @Test("every supported type round-trips through encoder and decoder")
    func roundTrips() throws {
        let fields = try FieldValueEncoder().encode(Self.everything)
        #expect(try FieldValueDecoder().decode(Everything.self, from: fields) == Self.everything)
    }

    @Test("an optional decodes as nil from an absent field and from null")
    func optionalsTolerateAbsentAndNull() throws {
        let decoder = FieldValueDecoder()
        #expect(try decoder.decode(Address.self, from: ["city": .string("A")]) == Address(city: "A", zip: nil))
        #expect(try decoder.decode(Address.self, from: ["city": .string("A"), "zip": .null]) == Address(city: "A", zip: nil))
    }

    @Test("the decoder reads an int into a Double, a UUID from its text, an array of strings from a set")
    func forgivingConversions() throws {
        struct Loose: Codable, Equatable { var d: Double; var u: UUID; var list: [String] }
        let loose = try FieldValueDecoder().decode(Loose.self, from: [
            "d": .int(3), "u": .string("CE56971C-DE35-4897-821E-FC0B1046C8BF"), "list": .stringSet(["b", "a"]),
        ])
        #expect(loose == Loose(d: 3, u: UUID(uuidString: "ce56971c-de35-4897-821e-fc0b1046c8bf")!, list: ["a", "b"]))
    }

    /// The coding path of the `DecodingError` decoding `fields` as `Everything` throws, as text.
    private func failure(_ change: (inout [String: FieldValue]) -> Void) throws -> (path: String, error: DecodingError) {
        var fields = try FieldValueEncoder().encode(Self.everything)
        change(&fields)
        do {
            _ = try FieldValueDecoder().decode(Everything.self, from: fields)
            Issue.record("decoded although it should not")
            return ("", DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "")))
        } catch let error as DecodingError {
            let path: [any CodingKey]
            switch error {
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): path = context.codingPath
            case .keyNotFound(let key, let context): path = context.codingPath + [key]
            @unknown default: path = []
            }
            return (path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined(), error)
        }
    }

    @Test("a field of the wrong type is a typeMismatch naming its path")
    func typeMismatchNamesThePath() throws {
        let (path, error) = try failure { $0["address"] = .object(["city": .int(5)]) }
        #expect(path == ".address.city")
        guard case .typeMismatch(_, let context) = error else { Issue.record("expected typeMismatch, got \(error)"); return }
        #expect(context.debugDescription == "expected a string, found int64")
        #expect(try failure { $0["scores"] = .array([.int(1), .string("x")]) }.path == ".scores[1]")
        #expect(try failure { $0["date"] = .int(5) }.path == ".date")
        #expect(try failure { $0["uuid"] = .string("not a uuid") }.path == ".uuid")
        #expect(try failure { $0["data"] = .string("x") }.path == ".data")
        #expect(try failure { $0["mood"] = .string("angry") }.path == ".mood")
    }

    @Test("a missing field is keyNotFound, null in a required field valueNotFound, an int too large for its type dataCorrupted")
    func otherFailures() throws {
        let missing = try failure { $0["string"] = nil }
        #expect(missing.path == ".string")
        guard case .keyNotFound = missing.error else { Issue.record("expected keyNotFound, got \(missing.error)"); return }
        let null = try failure { $0["bool"] = .null }
        guard case .valueNotFound = null.error else { Issue.record("expected valueNotFound, got \(null.error)"); return }
        let big = try failure { $0["int8"] = .int(300) }
        #expect(big.path == ".int8")
        guard case .dataCorrupted = big.error else { Issue.record("expected dataCorrupted, got \(big.error)"); return }
    }

    @Test("a UInt64 above Int64.max is an encoding error naming the property")
    func unsignedOverflowIsAnEncodingError() {
        struct Big: Codable { var count: UInt64 }
        #expect {
            _ = try FieldValueEncoder().encode(Big(count: .max))
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["count"]
        }
    }

    /// A list that nests itself `depth` deep.
    indirect enum Chain: Codable { case end; case link([Chain]) }
    static func chain(_ depth: Int) -> Chain { (0..<depth).reduce(Chain.end) { inner, _ in .link([inner]) } }

    @Test("values nested more than 10 deep are an encoding error, even when the type nests without end")
    func tooDeepIsAnEncodingError() throws {
        struct Holder: Codable { var chain: Chain }
        // The end is an object holding an empty object (2 levels); each link an object
        // holding an object holding an array (3 levels): chain(2) nests 8 deep, chain(3) 11.
        let fields = try FieldValueEncoder().encode(Holder(chain: Self.chain(2)))
        #expect(fields["chain"]?.nestingDepth == 8)
        #expect(throws: EncodingError.self) { _ = try FieldValueEncoder().encode(Holder(chain: Self.chain(3))) }
        #expect(throws: EncodingError.self) { _ = try FieldValueEncoder().encode(Holder(chain: Self.chain(1_000))) }
    }

    @Test("a value that does not encode as named fields cannot be a record")
    func topLevelMustBeKeyed() {
        #expect(throws: EncodingError.self) { _ = try FieldValueEncoder().encode([1, 2]) }
        #expect(throws: EncodingError.self) { _ = try FieldValueEncoder().encode("text") }
        #expect(throws: DecodingError.self) { _ = try FieldValueDecoder().decode(Address.self, fromValue: .array([])) }
    }
}
