import SyncJournalProtocol
import Testing
import SyncJournalCore
import SyncJournalStore
import SyncJournalTesting

/// Seeded fuzzing of the decoders. Any trap fails the whole test process; the
/// properties below check that whatever decodes is a faithful, canonical value.
@Suite("Seeded fuzzing of operation and batch decoding")
struct FuzzTests {
    static let iterations = 20_000

    /// Checks the properties of a successful decode of `input` into `operations`:
    /// re-encoding and decoding again gives an equal value, and the re-encoding is the input itself
    /// (every accepted payload is the canonical encoding of what it decodes to).
    private func checkAccepted(_ operations: [JournalOperation], input: [UInt8], batch: Bool, note: String) {
        let reEncoded = batch ? JournalOperation.encodeBatch(operations) : operations[0].encoded()
        do throws(ByteReader.Failure) {
            let again = batch ? try JournalOperation.decodeBatch(reEncoded) : [try JournalOperation.decode(reEncoded)]
            #expect(again == operations, "\(note): re-decoding changed the value")
        } catch {
            Issue.record("\(note): re-encoding of an accepted payload does not decode: \(error)")
        }
        #expect(reEncoded == input, "\(note): accepted a non-canonical payload \(input)")
    }

    private func fuzzOperation(_ input: [UInt8], note: @autoclosure () -> String) -> Bool {
        do throws(ByteReader.Failure) {
            let operation = try JournalOperation.decode(input)
            checkAccepted([operation], input: input, batch: false, note: note())
            return true
        } catch {
            return false
        }
    }

    private func fuzzBatch(_ input: [UInt8], note: @autoclosure () -> String) -> Bool {
        do throws(ByteReader.Failure) {
            let operations = try JournalOperation.decodeBatch(input)
            #expect(!operations.isEmpty)
            checkAccepted(operations, input: input, batch: true, note: note())
            return true
        } catch {
            return false
        }
    }

    @Test("20,000 random byte arrays never crash decode or decodeBatch")
    func randomBytesNeverCrash() {
        var rng = SeededGenerator(seed: 0xF022_0001)
        var accepted = 0
        for i in 0..<Self.iterations {
            var input = randomBytes(count: Int.random(in: 0...96, using: &rng), using: &rng)
            // Every other input gets a plausible header (valid op, small lengths) so decoding gets past the first bytes.
            if i % 2 == 1, input.count > 24 {
                input[16] = UInt8.random(in: 1...3, using: &rng)
                input[17] = UInt8.random(in: 0...4, using: &rng)
            }
            if fuzzOperation(input, note: "random #\(i)") { accepted += 1 }
            if fuzzBatch([UInt8.random(in: 0...3, using: &rng)] + input, note: "random batch #\(i)") { accepted += 1 }
            // And through the entry decoder, with a random type.
            let type = RecordType(rawValue: [0x0001, 0x0002, 0x8F01, 0x0003, 0x8123, 0x0777].randomElement(using: &rng)!)
            _ = try? JournalEntry.decode(JournalRecord(offset: 80, sequence: UInt64(i + 1), type: type, payload: input))
        }
        // Informational: random bytes are almost never a valid operation.
        #expect(accepted < Self.iterations)
    }

    /// Valid encodings to mutate: single operations and batches of 1...4.
    private func corpus(using rng: inout SeededGenerator) -> (operations: [[UInt8]], batches: [[UInt8]]) {
        let operations = (0..<200).map { _ in randomOperation(using: &rng).encoded() }
        let batches = (0..<100).map { _ in
            JournalOperation.encodeBatch((0..<Int.random(in: 1...4, using: &rng)).map { _ in randomOperation(using: &rng) })
        }
        return (operations, batches)
    }

    /// One single-byte mutation: a random new value, a flipped bit, or an edge value (0, 1, 0x7F, 0x80, 0xFF).
    private func mutate(_ bytes: [UInt8], using rng: inout SeededGenerator) -> (bytes: [UInt8], at: Int) {
        var mutated = bytes
        let at = Int.random(in: 0..<bytes.count, using: &rng)
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: mutated[at] = UInt8.random(in: 0...255, using: &rng)
        case 1: mutated[at] ^= 1 << UInt8.random(in: 0...7, using: &rng)
        default: mutated[at] = [0x00, 0x01, 0x02, 0x03, 0x7F, 0x80, 0x81, 0xFF].randomElement(using: &rng)!
        }
        return (mutated, at)
    }

    @Test("20,000 single-byte mutations of valid operations never crash, and what decodes re-encodes to an equal value")
    func mutatedOperationsNeverCrash() {
        var rng = SeededGenerator(seed: 0xF022_0002)
        let (operations, _) = corpus(using: &rng)
        var accepted = 0
        for i in 0..<Self.iterations {
            let original = operations.randomElement(using: &rng)!
            let (mutated, at) = mutate(original, using: &rng)
            if fuzzOperation(mutated, note: "mutation #\(i) at \(at)") { accepted += 1 }
        }
        // Mutations of the id, of string contents and of values keep the payload valid, so many are accepted:
        // the property above was really exercised.
        #expect(accepted > Self.iterations / 10)
    }

    @Test("20,000 single-byte mutations of valid batches never crash, and what decodes re-encodes to an equal value")
    func mutatedBatchesNeverCrash() {
        var rng = SeededGenerator(seed: 0xF022_0003)
        let (_, batches) = corpus(using: &rng)
        var accepted = 0
        for i in 0..<Self.iterations {
            let original = batches.randomElement(using: &rng)!
            let (mutated, at) = mutate(original, using: &rng)
            if fuzzBatch(mutated, note: "batch mutation #\(i) at \(at)") { accepted += 1 }
            // Cutting the mutated batch short must never be accepted.
            let cut = Int.random(in: 0..<mutated.count, using: &rng)
            #expect(batchFailure(Array(mutated[..<cut])) != nil || mutated[0] != original[0],
                    "batch mutation #\(i) cut at \(cut) decoded")
        }
        #expect(accepted > Self.iterations / 10)
    }

    @Test("unmutated corpus entries decode and re-encode byte for byte")
    func corpusIsValid() throws {
        var rng = SeededGenerator(seed: 0xF022_0002)
        let (operations, batches) = corpus(using: &rng)
        for bytes in operations { #expect(try JournalOperation.decode(bytes).encoded() == bytes) }
        for bytes in batches { #expect(JournalOperation.encodeBatch(try JournalOperation.decodeBatch(bytes)) == bytes) }
    }
}
