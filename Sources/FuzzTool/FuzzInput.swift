import Foundation
import SyncJournalProtocol
import SyncJournalStore

/// Turns fuzz bytes into structured choices, deterministically: each call
/// consumes a few bytes and maps them to a value; once the bytes run out,
/// every call returns its zero choice (so a short input is a complete,
/// simple script). Like LLVM's `FuzzedDataProvider`, but read front to back.
///
/// ```swift
/// var input = FuzzInput([3, 1, 0x41])
/// input.int(below: 4)    // 3
/// input.bool()           // true
/// input.byte()           // 0x41
/// input.byte()           // 0 (exhausted)
/// ```
package struct FuzzInput: Sendable {
    /// The bytes.
    package let bytes: [UInt8]
    /// The next byte to read.
    package private(set) var position = 0

    /// Reads `bytes` from the start.
    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte has been read.
    package var isExhausted: Bool { position >= bytes.count }

    /// The next byte, 0 once the input is exhausted.
    package mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// The next `count` bytes (zeros past the end).
    package mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in byte() }
    }

    /// Bit 0 of the next byte.
    package mutating func bool() -> Bool { byte() & 1 == 1 }

    /// A value in `0 ..< bound` (`bound` between 1 and 256) from one byte.
    package mutating func int(below bound: Int) -> Int {
        precondition(bound >= 1 && bound <= 256)
        return Int(byte()) % bound
    }

    /// An element of `choices` (not empty) chosen by one byte.
    package mutating func pick<T>(_ choices: [T]) -> T { choices[int(below: choices.count)] }

    /// A stamp: mostly small and non-negative (so replies are plausible),
    /// sometimes negative, extreme or any 64-bit value.
    package mutating func int64() -> Int64 {
        let selector = byte()
        switch selector % 8 {
        case 0, 1, 2, 3: return Int64(selector >> 3) * 10 + Int64(byte())
        case 4: return -Int64(byte())
        case 5: return [Int64.min, Int64.max, 0, -1][Int(byte()) % 4]
        default:
            var value: UInt64 = 0
            for byte in bytes(8) { value = value << 8 | UInt64(byte) }
            return Int64(bitPattern: value)
        }
    }

    /// A string: usually one of `vocabulary`, sometimes empty or up to 80
    /// raw bytes (decoded as UTF-8 with repair, so any bytes make a string).
    package mutating func string(_ vocabulary: [String]) -> String {
        let selector = byte()
        switch selector % 8 {
        case 6:
            let count = Int(byte()) % 81
            return String(decoding: bytes(count), as: UTF8.self)
        case 7: return ""
        default: return vocabulary.isEmpty ? "" : vocabulary[Int(selector >> 3) % vocabulary.count]
        }
    }

    /// A field value of any of the eleven types; arrays and objects nest up to
    /// one level past the limit, so decoders meet values they must refuse.
    package mutating func fieldValue(depth: Int = 0) -> FieldValue {
        switch byte() % 11 {
        case 0: return .null
        case 1: return .bool(bool())
        case 2: return .int(int64())
        case 3:
            var bits: UInt64 = 0
            for byte in bytes(8) { bits = bits << 8 | UInt64(byte) }
            return .double(Double(bitPattern: bits))
        case 4: return .string(string(["Cafe", "Café Kranz", "", "x"]))
        case 5: return .bytes(bytes(Int(byte()) % 9))
        case 6:
            let count = Int(byte()) % 4
            return .stringSet(Set((0..<count).map { _ in string(["coffee", "food", "z"]) }))
        case 7: return .timestamp(int64())
        case 8: return .uuid(UUID(uuid: (byte(), byte(), byte(), byte(), byte(), byte(), byte(), byte(),
                                         byte(), byte(), byte(), byte(), byte(), byte(), byte(), byte())))
        case 9:
            if depth > FieldValue.maximumNestingDepth { return .null }
            return .array((0..<Int(byte()) % 4).map { _ in fieldValue(depth: depth + 1) })
        default:
            if depth > FieldValue.maximumNestingDepth { return .null }
            var members: [String: FieldValue] = [:]
            for _ in 0..<Int(byte()) % 4 { members[string(["city", "zip", "", "geo"])] = fieldValue(depth: depth + 1) }
            return .object(members)
        }
    }

    /// Up to `maximum` fields with names from a small vocabulary (the
    /// empty name among them, which no row may hold).
    package mutating func fields(maximum: Int = 3) -> [String: FieldValue] {
        var fields: [String: FieldValue] = [:]
        for _ in 0..<int(below: maximum + 1) {
            fields[string(["name", "tags", "lat", "visited"])] = fieldValue()
        }
        return fields
    }
}

extension StoreState {
    /// Which parts of two states differ, for a finding's detail: `snapshot`,
    /// `outbox`, `cursors`, `conflicts`, `rejections`, `base rows`, each with
    /// a short account of the first difference.
    func difference(from other: StoreState) -> String {
        var parts: [String] = []
        if snapshot != other.snapshot {
            let keys = Set(snapshot.keys).union(other.snapshot.keys).filter { snapshot[$0] != other.snapshot[$0] }
            parts.append("snapshot (\(keys.sorted(by: <).prefix(3).map { "\($0): \(String(describing: snapshot[$0])) vs \(String(describing: other.snapshot[$0]))" }))")
        }
        if outbox != other.outbox {
            let mine = outbox.operations, theirs = other.outbox.operations
            let index = (0..<min(mine.count, theirs.count)).first { mine[$0] != theirs[$0] } ?? min(mine.count, theirs.count)
            parts.append("outbox (\(mine.count) vs \(theirs.count) entries, first difference at \(index): "
                + "\(index < mine.count ? "\(mine[index])" : "-") vs \(index < theirs.count ? "\(theirs[index])" : "-"))")
        }
        if cursors != other.cursors { parts.append("cursors (\(cursors) vs \(other.cursors))") }
        if conflicts != other.conflicts {
            parts.append("conflicts (\(conflicts.count) vs \(other.conflicts.count): \(conflicts.first.map { "\($0)" } ?? "-") vs \(other.conflicts.first.map { "\($0)" } ?? "-"))")
        }
        if rejections != other.rejections { parts.append("rejections (\(rejections.count) vs \(other.rejections.count))") }
        if baseRows != other.baseRows { parts.append("base rows (\(baseRows) vs \(other.baseRows))") }
        return parts.isEmpty ? "no difference" : parts.joined(separator: "; ")
    }
}
