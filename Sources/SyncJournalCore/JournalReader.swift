/// Reads and verifies a journal file, streaming: memory stays bounded by the
/// largest record whatever the file's size.
///
/// The reader never changes the file. It classifies it as clean, torn tail or
/// corrupt (``JournalStatus``) and hands every valid record of the valid
/// prefix to a closure, in order.
///
/// ```swift
/// let report = try JournalReader(path: "journals/samples/healthy.journal").scan { record in
///     print(record.sequence, record.type)
/// }
/// print(report.status)   // clean
/// ```
public struct JournalReader: Sendable {
    /// The journal's path.
    public let path: String
    /// The system-call layer used for every read.
    public let system: any SystemCalls

    /// A reader of the journal at `path`.
    public init(path: String, system: any SystemCalls = PosixSystemCalls()) {
        self.path = path
        self.system = system
    }

    /// Verifies the whole file and calls `visit` for each valid record of the
    /// valid prefix.
    ///
    /// Throws ``JournalError/notAJournal(path:)`` and
    /// ``JournalError/unsupportedVersion(path:major:minor:)`` for files it must
    /// not interpret, ``JournalError/io(_:)`` for read errors (never taken for
    /// damage), and whatever `visit` throws. Damage is not thrown: it is the
    /// report's ``JournalScanReport/status``.
    public func scan(_ visit: (JournalRecord) throws -> Void = { _ in }) throws -> JournalScanReport {
        try withScanner { scanner in try scanner.run(visit) }
    }

    /// Opens the file read-only and runs `body` with a scanner over it.
    private func withScanner<T>(_ body: (inout JournalScanner) throws -> T) throws -> T {
        let fd: FileDescriptor
        do { fd = try system.open(path, .readOnly, 0) } catch { throw JournalError.io(error.at(path)) }
        defer { try? system.close(fd) }
        var scanner: JournalScanner
        do { scanner = try JournalScanner(io: FileIO(system), fd: fd, path: path) } catch { throw JournalError.io(error) }
        return try body(&scanner)
    }

    /// Reads and verifies only the file header: `nil` when the header is
    /// damaged (``scan(_:)`` reports how), and the same errors as ``scan(_:)``
    /// for a file that is not a journal this reader can interpret.
    public func header() throws -> JournalHeader? {
        let io = FileIO(system)
        let fd: FileDescriptor
        do { fd = try system.open(path, .readOnly, 0) } catch { throw JournalError.io(error.at(path)) }
        defer { try? system.close(fd) }
        let bytes: [UInt8]
        do { bytes = try io.read(fd, count: JournalFormat.maximumHeaderLength, at: 0, path: path) } catch { throw JournalError.io(error) }
        do {
            return try JournalHeader.decode(bytes)
        } catch {
            switch error {
            case .badMagic: throw JournalError.notAJournal(path: path)
            case .unsupportedVersion(let major, let minor): throw JournalError.unsupportedVersion(path: path, major: major, minor: minor)
            default: return nil
            }
        }
    }

    /// Verifies the file and returns the report with every valid record.
    /// Memory grows with the file; meant for tests and small journals.
    public func readAll() throws -> (report: JournalScanReport, records: [JournalRecord]) {
        var records: [JournalRecord] = []
        let report = try scan { records.append($0) }
        return (report, records)
    }

    /// The valid records of this generation found **after** the damage of a
    /// torn or corrupt journal (each verified on its own), for salvage and
    /// inspection. Empty for a clean journal.
    public func recordsAfterDamage() throws -> [JournalRecord] {
        try withScanner { scanner in
            let report = try scanner.run { _ in }
            guard let offset = report.status.damageOffset, let header = report.header else { return [] }
            return try scanner.validRecords(after: offset, generation: header.generation)
        }
    }
}

/// The scanning state machine behind ``JournalReader``.
struct JournalScanner {
    private var window: FileWindow
    let path: String

    init(io: FileIO, fd: FileDescriptor, path: String) throws(SystemError) {
        let size: Int64
        do { size = try io.system.fileSize(fd) } catch { throw error.at(path) }
        window = FileWindow(io: io, fd: fd, path: path, fileSize: size)
        self.path = path
    }

    /// What stands at one offset of the file.
    enum Probe {
        case end
        case record(RecordFrame.Header, payloadLength: Int)
        case damage(JournalDamage)
    }

    private func ioError(_ error: SystemError) -> JournalError { .io(error.at(path)) }

    mutating func run(_ visit: (JournalRecord) throws -> Void) throws -> JournalScanReport {
        let fileSize = window.fileSize
        var report = JournalScanReport(header: nil, status: .clean, recordCount: 0, recordsByType: [:],
                                       validBytes: 0, fileBytes: fileSize, lastSequence: nil)
        // Header.
        let header: JournalHeader
        do {
            let prefixCount = try window.load(0, 16)
            let length: Int
            do { length = try JournalHeader.declaredLength(window.copy(0, prefixCount)) } catch {
                return try headerFailure(error, report: report)
            }
            let available = try window.load(0, length)
            do { header = try JournalHeader.decode(window.copy(0, available)) } catch {
                return try headerFailure(error, report: report)
            }
        } catch let error as SystemError {
            throw ioError(error)
        }
        report.header = header
        var offset = Int64(header.headerLength)
        report.validBytes = offset
        var expected = header.firstSequence
        // Records of one type usually come in runs: they are counted here and
        // added to the table when the type changes or the scan ends, instead
        // of hashing the type for every record.
        var run: (type: RecordType, count: Int)?
        func countRun() {
            if let run { report.recordsByType[run.type, default: 0] += run.count }
        }

        while true {
            let probe: Probe
            do { probe = try self.probe(at: offset, generation: header.generation) } catch { throw ioError(error) }
            switch probe {
            case .end:
                countRun()
                return report
            case .damage(let damage):
                countRun()
                // Zeros from a record boundary to the end are the space the
                // writer preallocates, not damage; no record can hide in them
                // (type 0 is invalid), so nothing later needs a search.
                let zeroTail: Bool
                do { zeroTail = try isZeroFilled(from: offset) } catch { throw ioError(error) }
                if zeroTail {
                    report.preallocatedBytes = fileSize - offset
                    return report
                }
                report.status = try classify(damage, at: offset, generation: header.generation)
                return report
            case .record(let frame, let payloadLength):
                guard frame.sequence == expected else {
                    countRun()
                    report.status = .corrupt(offset: offset, damage: .sequenceMismatch(expected: expected, found: frame.sequence))
                    return report
                }
                let record = JournalRecord(offset: offset, sequence: frame.sequence, type: frame.type,
                                           payload: window.copy(offset + Int64(JournalFormat.recordHeaderLength), payloadLength))
                try visit(record)
                report.recordCount += 1
                if run?.type == frame.type { run!.count += 1 } else {
                    countRun()
                    run = (frame.type, 1)
                }
                report.lastSequence = frame.sequence
                offset += Int64(JournalFormat.recordHeaderLength + payloadLength)
                report.validBytes = offset
                expected += 1
            }
        }
    }

    private func headerFailure(_ problem: JournalHeader.Problem, report: JournalScanReport) throws -> JournalScanReport {
        switch problem {
        case .badMagic: throw JournalError.notAJournal(path: path)
        case .unsupportedVersion(let major, let minor): throw JournalError.unsupportedVersion(path: path, major: major, minor: minor)
        default:
            var report = report
            report.status = .corrupt(offset: 0, damage: .header(problem))
            return report
        }
    }

    /// Examines the bytes at `offset`: the end of the file, a record that
    /// verifies (its payload loaded in the window), or damage.
    mutating func probe(at offset: Int64, generation: UInt64) throws(SystemError) -> Probe {
        let remaining = window.fileSize - offset
        if remaining <= 0 { return .end }
        let headerBytes = try window.load(offset, JournalFormat.recordHeaderLength)
        if headerBytes < JournalFormat.recordHeaderLength {
            return .damage(.incompleteRecordHeader(available: headerBytes))
        }
        let frame = window.withBytes(offset, JournalFormat.recordHeaderLength) { RecordFrame.Header($0, at: 0) }
        if Int(frame.length) > JournalFormat.maximumPayloadLength { return .damage(.impossibleLength(frame.length)) }
        let total = JournalFormat.recordHeaderLength + Int(frame.length)
        if Int64(total) > remaining {
            return .damage(.incompletePayload(declared: frame.length, available: Int(remaining) - JournalFormat.recordHeaderLength))
        }
        let loaded = try window.load(offset, total)
        if loaded < total { return .damage(.incompletePayload(declared: frame.length, available: loaded - JournalFormat.recordHeaderLength)) }
        let crc = window.withBytes(offset + 4, total - 4) { CRC32C.checksum($0) }
        if CRC32C.mask(crc) != frame.checksum { return .damage(.checksumMismatch) }
        if frame.generation != generation { return .damage(.foreignGeneration(frame.generation)) }
        if frame.type == .invalid || frame.reserved != 0 { return .damage(.invalidRecordHeader) }
        return .record(frame, payloadLength: Int(frame.length))
    }

    /// Decides whether damage at `offset` is a torn tail or corruption: it is
    /// corruption when any later offset holds a valid record of this generation.
    mutating func classify(_ damage: JournalDamage, at offset: Int64, generation: UInt64) throws -> JournalStatus {
        let later: Int64?
        do { later = try firstValidRecord(after: offset, generation: generation) } catch { throw ioError(error) }
        if let later {
            return .corrupt(offset: offset, damage: .damageBeforeValidRecord(.init(damage), validRecordAt: later))
        }
        return .tornTail(offset: offset, damage: damage)
    }

    /// The first offset after `offset` where a record of `generation` verifies.
    mutating func firstValidRecord(after offset: Int64, generation: UInt64) throws(SystemError) -> Int64? {
        var candidate = offset + 1
        let last = window.fileSize - Int64(JournalFormat.recordHeaderLength)
        while candidate <= last {
            // Cheap filter first: the generation field must match before the checksum is worth computing.
            _ = try window.load(candidate, JournalFormat.recordHeaderLength)
            let matches = window.withBytes(candidate + 12, 8) { raw -> Bool in
                var value: UInt64 = 0
                for i in 0..<8 { value |= UInt64(raw[i]) << UInt64(8 * i) }
                return value == generation
            }
            if matches, case .record = try probe(at: candidate, generation: generation) { return candidate }
            candidate += 1
        }
        return nil
    }

    /// Every record of `generation` that verifies on its own after `offset`.
    mutating func validRecords(after offset: Int64, generation: UInt64) throws -> [JournalRecord] {
        var records: [JournalRecord] = []
        var from = offset
        while true {
            let next: Int64?
            do { next = try firstValidRecord(after: from, generation: generation) } catch { throw ioError(error) }
            guard let at = next else { return records }
            do {
                if case .record(let frame, let length) = try probe(at: at, generation: generation) {
                    records.append(JournalRecord(offset: at, sequence: frame.sequence, type: frame.type,
                                                 payload: window.copy(at + Int64(JournalFormat.recordHeaderLength), length)))
                    from = at + Int64(JournalFormat.recordHeaderLength + length) - 1
                    continue
                }
            } catch { throw ioError(error) }
            from = at
        }
    }

    private mutating func isZeroFilled(from offset: Int64) throws(SystemError) -> Bool {
        var at = offset
        while at < window.fileSize {
            let count = try window.load(at, FileWindow.chunk)
            if count == 0 { break }
            let zero = window.withBytes(at, count) { raw in raw.allSatisfy { $0 == 0 } }
            if !zero { return false }
            at += Int64(count)
        }
        return true
    }
}
