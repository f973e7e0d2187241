/// A hash map split into many small dictionaries by the key's bits, so that
/// two copies of it share every part neither has changed.
///
/// The store keeps the state later edits are decided against and the state
/// the app sees; between writes they are one value. When the next write
/// changes the decided state, copy-on-write copies only the parts that write
/// touches (a few dozen entries each), not the whole table of 100,000 rows
/// or queued operations. The number of parts grows with the count (16 to 32
/// entries a part), so a small store is one dictionary.
///
/// The parts are held in groups, so that a write also copies only one group
/// and the list of groups (about the square root of the number of parts
/// each), not a list of every part: with 100,000 entries that is 64 and 64
/// references to retain where it was 4,096, on every write while the
/// visible state shares the map.
package struct PartitionedMap<Key: PartitionKey, Value: Sendable>: Sendable {
    /// The groups of parts; a key lies in the part its hash's top bits name,
    /// the high half of those bits naming the group.
    private var groups: [[[Key: Value]]] = [[[:]]]
    /// How far a hash is shifted right to give its part (64: one part).
    private var shift = 64
    /// How many of the part's bits choose the part within its group.
    private var innerBits = 0
    /// Entries in all parts.
    package private(set) var count = 0

    /// An empty map.
    package init() {}

    /// Entries at which the number of parts doubles: 32 a part.
    private var growthThreshold: Int { (1 << (64 - shift)) << 5 }

    @inline(__always)
    private func location(of key: Key) -> (group: Int, part: Int) {
        guard shift < 64 else { return (0, 0) }
        let index = Int(truncatingIfNeeded: key.partitionBits >> UInt64(shift))
        return (index >> innerBits, index & ((1 << innerBits) - 1))
    }

    /// Whether the map is empty.
    package var isEmpty: Bool { count == 0 }

    /// The value for `key`.
    package subscript(key: Key) -> Value? {
        get {
            let (group, part) = location(of: key)
            return groups[group][part][key]
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Sets the value for `key`; returns the value it replaced.
    @discardableResult
    package mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        let (group, part) = location(of: key)
        let old = groups[group][part].updateValue(value, forKey: key)
        if old == nil {
            count += 1
            if count > growthThreshold && shift > 48 { repartition() }
        }
        return old
    }

    /// Removes `key`; returns its value.
    @discardableResult
    package mutating func removeValue(forKey key: Key) -> Value? {
        let (group, part) = location(of: key)
        let old = groups[group][part].removeValue(forKey: key)
        if old != nil { count -= 1 }
        return old
    }

    /// Changes the value for `key` where it lies (no copy of the value when
    /// the part is not shared); `body` may set it to `nil` to remove it.
    package mutating func modify<Result>(_ key: Key, _ body: (inout Value?) -> Result) -> Result {
        func run(_ slot: inout Value?) -> (Result, had: Bool, has: Bool) {
            let had = slot != nil
            let result = body(&slot)
            return (result, had, slot != nil)
        }
        let (group, part) = location(of: key)
        let (result, had, has) = run(&groups[group][part][key])
        if had != has {
            count += has ? 1 : -1
            if has && count > growthThreshold && shift > 48 { repartition() }
        }
        return result
    }

    /// Doubles the number of parts, moving every entry (amortised: once per doubling of the count).
    private mutating func repartition() {
        let old = groups
        shift = shift == 64 ? 63 : shift - 1
        let bits = 64 - shift
        innerBits = (bits + 1) / 2
        groups = Array(repeating: Array(repeating: [:], count: 1 << innerBits), count: 1 << (bits - innerBits))
        for group in old {
            for piece in group {
                for (key, value) in piece {
                    let (group, part) = location(of: key)
                    groups[group][part][key] = value
                }
            }
        }
    }

    /// The keys, in no particular order.
    package var keys: some Sequence<Key> { groups.lazy.joined().flatMap(\.keys) }

    /// The values, in no particular order.
    package var values: some Sequence<Value> { groups.lazy.joined().flatMap(\.values) }

    /// The entries for which `isIncluded` holds, as a dictionary.
    package func filter(_ isIncluded: ((key: Key, value: Value)) throws -> Bool) rethrows -> [Key: Value] {
        var kept: [Key: Value] = [:]
        for group in groups {
            for piece in group {
                for entry in piece where try isIncluded(entry) { kept[entry.key] = entry.value }
            }
        }
        return kept
    }
}

extension PartitionedMap: Sequence {
    /// Walks the entries part by part.
    package func makeIterator() -> FlattenSequence<FlattenSequence<[[[Key: Value]]]>>.Iterator {
        groups.joined().joined().makeIterator()
    }

    package var underestimatedCount: Int { count }
}

extension PartitionedMap: Equatable where Value: Equatable {
    /// Equal when they hold the same entries, however they are split.
    package static func == (lhs: PartitionedMap, rhs: PartitionedMap) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (key, value) in lhs where rhs[key] != value { return false }
        return true
    }
}

extension PartitionedMap: Hashable where Value: Hashable {
    /// Independent of the order and of the split: each entry is hashed on
    /// its own and the hashes are combined by addition.
    package func hash(into hasher: inout Hasher) {
        var sum = 0
        for (key, value) in self {
            var entry = Hasher()
            entry.combine(key)
            entry.combine(value)
            sum = sum &+ entry.finalize()
        }
        hasher.combine(count)
        hasher.combine(sum)
    }
}

extension PartitionedMap: ExpressibleByDictionaryLiteral {
    /// A map of the given entries (a later duplicate key wins).
    package init(dictionaryLiteral elements: (Key, Value)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }
}
