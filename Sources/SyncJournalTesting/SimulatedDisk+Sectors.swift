import SyncJournalCore

// The vocabulary of the sector-granularity power-loss model: which unsynced
// sectors of a file reach the platter, whether its unsynced size change does,
// and every state a power cut can leave behind.

extension SimulatedDisk {
    /// The unit a power cut keeps or loses: 512 bytes, aligned. A sector
    /// reaches the disk whole or not at all; it never holds a mix of two
    /// versions.
    public static let sectorSize = 512

    /// What one power cut does to one file: which of its unsynced sectors
    /// reach the disk with their latest bytes, and whether its unsynced size
    /// change survives.
    ///
    /// Every other sector keeps its durable bytes (what was there at the
    /// file's last successful `fdatasync`/`fsync`). Where the durable file had
    /// no bytes at all, "durable bytes" means nothing: if the surviving length
    /// reaches past the durable length, an unkept sector there reads as zeros.
    /// Likewise a kept sector reads as zeros past the current end (what an
    /// unsynced truncation cleared), should the durable length survive.
    /// Sectors at or past the surviving length do not exist.
    ///
    /// ```swift
    /// // Sector 3 of the journal reaches the disk, sector 4 does not; the file keeps its new length.
    /// let choice = SimulatedDisk.SectorChoice(keeping: [3], keepsLength: true)
    /// disk.crash(.sectors(kept: ["/device/app.journal": choice], keptEntries: [:]))
    /// ```
    public struct SectorChoice: Sendable, Hashable, CustomStringConvertible {
        /// Indices (byte offset / ``SimulatedDisk/sectorSize``) of the sectors
        /// that reach the disk with their latest bytes. Indices of sectors
        /// with nothing unsynced change nothing.
        public var keptSectors: Set<Int>
        /// Whether the file's length after the crash is its current length
        /// (`true`) or its durable one (`false`). Meaningless when the two are equal.
        public var keepsLength: Bool

        /// A choice keeping `sectors` and, if `keepsLength`, the current length.
        public init(keeping sectors: Set<Int> = [], keepsLength: Bool = false) {
            keptSectors = sectors
            self.keepsLength = keepsLength
        }

        /// Nothing unsynced survives: the file is left exactly as it was at its last sync.
        public static let durable = SectorChoice()

        /// `sectors [3, 4] kept, current length` or `nothing kept, durable length`.
        public var description: String {
            let sectors = keptSectors.isEmpty ? "no sector kept" : "sectors \(keptSectors.sorted()) kept"
            return sectors + (keepsLength ? ", current length" : ", durable length")
        }
    }

    /// What a power cut could do to one file right now: its durable and
    /// current lengths and the sectors whose durable and current bytes differ.
    ///
    /// The distinct states the file can be left in are: for each length it
    /// may keep, every subset of the sectors that differ below that length.
    /// That is `2^n` states when the length cannot change, and
    /// `2^(sectors below the durable length) + 2^(sectors below the current
    /// length)` when it can (a sector past the surviving length does not
    /// exist, so keeping it or not is the same state).
    ///
    /// ```swift
    /// let file = disk.unsyncedSectors(of: "/device/app.journal")
    /// for choice in file.choices {          // every distinct crash state, when there are few
    ///     let copy = disk.snapshot()
    ///     copy.crash(.sectors(kept: [file.path: choice], keptEntries: [:]))
    /// }
    /// ```
    public struct UnsyncedSectors: Sendable, Hashable, CustomStringConvertible {
        /// The file's current path.
        public let path: String
        /// The length at the file's last sync.
        public let durableLength: Int
        /// The length a read sees now.
        public let currentLength: Int
        /// Sectors whose bytes differ below the durable length (what matters
        /// when the file keeps its durable length), ascending.
        public let sectorsBelowDurableLength: [Int]
        /// Sectors whose bytes differ below the current length (what matters
        /// when the file keeps its current length), ascending.
        public let sectorsBelowCurrentLength: [Int]

        /// A description of a file's unsynced state, as the disk computes it.
        public init(path: String, durableLength: Int, currentLength: Int,
                    sectorsBelowDurableLength: [Int], sectorsBelowCurrentLength: [Int]) {
            self.path = path
            self.durableLength = durableLength
            self.currentLength = currentLength
            self.sectorsBelowDurableLength = sectorsBelowDurableLength
            self.sectorsBelowCurrentLength = sectorsBelowCurrentLength
        }

        /// Every sector whose durable and current bytes differ, ascending.
        public var sectors: [Int] { Array(Set(sectorsBelowDurableLength).union(sectorsBelowCurrentLength)).sorted() }

        /// Whether an unsynced size change (an extension or a truncation) is pending.
        public var lengthCanChange: Bool { durableLength != currentLength }

        /// Whether the file has nothing a crash could change (one state).
        public var isEmpty: Bool { !lengthCanChange && sectorsBelowCurrentLength.isEmpty }

        /// The number of distinct states a power cut can leave this file in
        /// (see the type's discussion); `Int.max` when it does not fit.
        public var crashStateCount: Int { choices.stateCount }

        /// Every distinct state, as choices, indexable (`choices[i]`) so a test
        /// can enumerate them all or sample indices. Building the collection
        /// traps when ``crashStateCount`` is `Int.max`; use
        /// ``randomChoice(using:)`` then.
        public var choices: SectorChoices { SectorChoices(self) }

        /// One crash state drawn the way ``CrashMode/random(seed:)`` draws:
        /// each differing sector kept with probability 1/2, the length change
        /// (if any) kept with probability 1/2. Sectors past the chosen length
        /// are left out of the result.
        public func randomChoice<G: RandomNumberGenerator>(using generator: inout G) -> SectorChoice {
            var kept = Set<Int>()
            for sector in sectors where Bool.random(using: &generator) { kept.insert(sector) }
            let keepsLength = lengthCanChange && Bool.random(using: &generator)
            return normalized(SectorChoice(keeping: kept, keepsLength: keepsLength))
        }

        /// `choice` with only the sectors that matter at the length it keeps
        /// (and `keepsLength` false when the length cannot change): two
        /// choices leave the same state exactly when their normal forms are equal.
        public func normalized(_ choice: SectorChoice) -> SectorChoice {
            let keepsLength = lengthCanChange && choice.keepsLength
            let relevant = keepsLength || !lengthCanChange ? sectorsBelowCurrentLength : sectorsBelowDurableLength
            return SectorChoice(keeping: choice.keptSectors.intersection(relevant), keepsLength: keepsLength)
        }

        /// `path: 512 -> 1100 bytes, sectors [1, 2]`.
        public var description: String {
            let lengths = lengthCanChange ? "\(durableLength) -> \(currentLength) bytes" : "\(currentLength) bytes"
            return "\(path): \(lengths), unsynced sectors \(sectors)"
        }
    }

    /// Every distinct crash state of one file (``UnsyncedSectors/choices``):
    /// first the states that keep the durable length, then those that keep
    /// the current length; within each, the subsets of the differing sectors
    /// in binary counting order (bit `k` of the position keeps the `k`-th
    /// differing sector).
    public struct SectorChoices: RandomAccessCollection, Sendable {
        private let file: UnsyncedSectors
        /// The number of states (saturated at `Int.max`).
        fileprivate let stateCount: Int

        fileprivate init(_ file: UnsyncedSectors) {
            self.file = file
            stateCount = file.lengthCanChange
                ? Self.saturatedAdd(Self.power(file.sectorsBelowDurableLength.count), Self.power(file.sectorsBelowCurrentLength.count))
                : Self.power(file.sectorsBelowCurrentLength.count)
        }

        private static func power(_ exponent: Int) -> Int { exponent >= Int.bitWidth - 2 ? Int.max : 1 << exponent }
        private static func saturatedAdd(_ a: Int, _ b: Int) -> Int {
            let (sum, overflow) = a.addingReportingOverflow(b)
            return overflow ? Int.max : sum
        }

        /// The first position.
        public var startIndex: Int { 0 }
        /// One past the last position.
        public var endIndex: Int {
            precondition(stateCount < Int.max, "\(file.path) has too many crash states to index; draw them with randomChoice(using:)")
            return stateCount
        }

        /// The state at `position`.
        public subscript(position: Int) -> SectorChoice {
            precondition(position >= 0 && position < endIndex, "crash state \(position) out of range")
            var index = position
            var keepsLength = !file.lengthCanChange ? false : true
            var sectors = file.sectorsBelowCurrentLength
            if file.lengthCanChange {
                let shortBlock = Self.power(file.sectorsBelowDurableLength.count)
                if index < shortBlock {
                    keepsLength = false
                    sectors = file.sectorsBelowDurableLength
                } else {
                    index -= shortBlock
                }
            }
            var kept = Set<Int>()
            for (bit, sector) in sectors.enumerated() where index >> bit & 1 == 1 { kept.insert(sector) }
            return SectorChoice(keeping: kept, keepsLength: keepsLength)
        }
    }

    /// Every distinct state a power cut can leave the whole disk in, from the
    /// moment ``SimulatedDisk/powerLossStates()`` was called: the product of
    /// every file's crash states (``UnsyncedSectors``) and, per directory,
    /// every prefix of its unsynced entry changes. Each element is a
    /// ``CrashMode/sectors(kept:keptEntries:)`` to give to
    /// ``SimulatedDisk/crash(_:)`` on a ``SimulatedDisk/snapshot()``.
    ///
    /// ```swift
    /// let states = disk.powerLossStates()
    /// let modes = states.count <= 1_024 ? Array(states) : (0..<300).map { _ in states.randomState(using: &random) }
    /// for mode in modes {
    ///     let copy = disk.snapshot()
    ///     copy.crash(mode)
    ///     // reopen on copy and check
    /// }
    /// ```
    public struct PowerLossStates: RandomAccessCollection, Sendable {
        /// The files with something a crash could change, in path order.
        public let files: [UnsyncedSectors]
        /// Directories with unsynced entry changes, and how many, in path order.
        public let directories: [(path: String, changes: Int)]
        /// The number of states, saturated at `Int.max` (then only ``randomState(using:)`` works).
        public let stateCount: Int

        /// The states of the given files and directories.
        public init(files: [UnsyncedSectors], directories: [(path: String, changes: Int)]) {
            self.files = files
            self.directories = directories
            var count = 1
            for radix in files.map(\.crashStateCount) + directories.map({ $0.changes + 1 }) {
                let (product, overflow) = count.multipliedReportingOverflow(by: radix)
                count = overflow ? Int.max : product
                if overflow { break }
            }
            stateCount = count
        }

        /// The first position.
        public var startIndex: Int { 0 }
        /// One past the last position (traps when the states cannot be counted in an `Int`).
        public var endIndex: Int {
            precondition(stateCount < Int.max, "too many crash states to index; draw them with randomState(using:)")
            return stateCount
        }

        /// The state at `position`, a mixed-radix number: files first, in
        /// path order, then directories.
        public subscript(position: Int) -> CrashMode {
            precondition(position >= 0 && position < endIndex, "crash state \(position) out of range")
            var rest = position
            var kept: [String: SectorChoice] = [:]
            for file in files {
                let count = file.crashStateCount
                kept[file.path] = file.choices[rest % count]
                rest /= count
            }
            var entries: [String: Int] = [:]
            for directory in directories {
                entries[directory.path] = rest % (directory.changes + 1)
                rest /= directory.changes + 1
            }
            return .sectors(kept: kept, keptEntries: entries)
        }

        /// One state drawn as ``CrashMode/random(seed:)`` draws: each sector
        /// kept with probability 1/2, each length change kept with
        /// probability 1/2, a uniformly random prefix of each directory's
        /// entry changes. Works however many states there are.
        public func randomState<G: RandomNumberGenerator>(using generator: inout G) -> CrashMode {
            var kept: [String: SectorChoice] = [:]
            for file in files { kept[file.path] = file.randomChoice(using: &generator) }
            var entries: [String: Int] = [:]
            for directory in directories { entries[directory.path] = Int.random(in: 0...directory.changes, using: &generator) }
            return .sectors(kept: kept, keptEntries: entries)
        }
    }

    /// Damage a disk does to data it already holds durably, later and
    /// without telling anyone: the media rots, firmware misdirects a write,
    /// a sector is lost. Unlike a power cut it can change bytes that were
    /// synced, so no write protocol can prevent it; recovery must **report**
    /// it (a corrupt journal, a refused open, a salvage), never repair it
    /// silently or take the damaged bytes for a clean end.
    ///
    /// ```swift
    /// disk.damageDurable(path: "/device/app.journal", .flipBit(byte: 200, bit: 3))
    /// ```
    public enum DurableDamage: Sendable, Hashable, CustomStringConvertible {
        /// Inverts bit `bit` (0 is the least significant) of the byte at offset `byte`.
        case flipBit(byte: Int, bit: Int)
        /// Overwrites the bytes in `range` with `byte` (0xFF: erased flash).
        case fill(Range<Int>, byte: UInt8)
        /// Sets every byte of sector `index` (bytes `512 * index ..< 512 * (index + 1)`) to zero.
        case zeroSector(Int)

        /// Overwrites `range` with 0xFF, as erased flash reads.
        public static func erase(_ range: Range<Int>) -> DurableDamage { .fill(range, byte: 0xFF) }

        /// The bytes this damage touches, before clamping to the file.
        public var range: Range<Int> {
            switch self {
            case .flipBit(let byte, _): return byte..<(byte + 1)
            case .fill(let range, _): return range
            case .zeroSector(let index): return (index * SimulatedDisk.sectorSize)..<((index + 1) * SimulatedDisk.sectorSize)
            }
        }

        /// `bit 3 of byte 200 flipped`, `bytes 10..<20 set to 0xff`, `sector 2 zeroed`.
        public var description: String {
            switch self {
            case .flipBit(let byte, let bit): return "bit \(bit) of byte \(byte) flipped"
            case .fill(let range, let byte): return "bytes \(range) set to 0x" + String(byte, radix: 16)
            case .zeroSector(let index): return "sector \(index) zeroed"
            }
        }

        /// The damaged value of the byte at `offset` (inside ``range``), given its value `old`.
        func apply(to old: UInt8, at offset: Int) -> UInt8 {
            switch self {
            case .flipBit(_, let bit): return old ^ (1 << UInt8(bit & 7))
            case .fill(_, let byte): return byte
            case .zeroSector: return 0
            }
        }
    }
}
