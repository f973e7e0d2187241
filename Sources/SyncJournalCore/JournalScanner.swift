/// The scanning state machine behind ``JournalReader`` and the writer's
/// recovery: verifies records in order and classifies the file
/// (`journals/FORMAT.md`, section 3).
///
/// A format-1.x file's damage is classified by the search for later valid
/// records (``JournalScanner/classifyFormat1(_:at:generation:expectedSequence:)``).
/// A format-2 file's damage is classified with its records' sync horizons
/// (``JournalScanner/classifyFormat2(_:at:header:expectedSequence:)``).
struct JournalScanner {
    var window: FileWindow
    let path: String
    let understands: (@Sendable (RecordType) -> Bool)?
    /// Bytes run through a checksum, or compared, while looking for records
    /// after damage: the work a crafted tail can cause, which must stay
    /// linear in the file's size.
    var searchWork = 0

    init(io: FileIO, fd: FileDescriptor, path: String, understands: (@Sendable (RecordType) -> Bool)? = nil) throws(SystemError) {
        let size: Int64
        do { size = try io.system.fileSize(fd) } catch { throw error.at(path) }
        window = FileWindow(io: io, fd: fd, path: path, fileSize: size)
        self.path = path
        self.understands = understands
    }

    /// What stands at one offset of the file.
    enum Probe {
        case end
        case record(RecordFrame.Header, payloadLength: Int)
        /// Damage a crash may explain; format 2 decides by the sync horizons.
        case damage(JournalDamage)
        /// Format 2: a record header that verifies but says something no
        /// writer writes. Corrupt whatever follows.
        case impossible(JournalDamage)
    }

    func ioError(_ error: SystemError) -> JournalError { .io(error.at(path)) }

    /// Scans the file. With `assumedHeader` the file's own header is not
    /// read: salvage passes the header it rebuilt for a damaged one.
    mutating func run(assuming assumedHeader: JournalHeader? = nil, _ visit: (JournalRecord) throws -> Void) throws -> JournalScanReport {
        let fileSize = window.fileSize
        var report = JournalScanReport(header: nil, status: .clean, recordCount: 0, recordsByType: [:],
                                       validBytes: 0, fileBytes: fileSize, lastSequence: nil)
        let header: JournalHeader
        if let assumedHeader {
            header = assumedHeader
        } else { do {
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
        } }
        report.header = header
        var offset = Int64(header.headerLength)
        report.validBytes = offset
        if header.hasSyncHorizons, header.flags != 0 || header.reserved != 0 {
            report.status = .unsupported(offset: 0, reason: .headerFlags(flags: header.flags, reserved: header.reserved))
            return report
        }
        let frameHeaderLength = header.recordHeaderLength
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
            do { probe = try self.probe(at: offset, header: header) } catch { throw ioError(error) }
            switch probe {
            case .end:
                countRun()
                return report
            case .impossible(let damage):
                countRun()
                report.status = .corrupt(offset: offset, damage: damage)
                return report
            case .damage(let damage):
                countRun()
                // Zeros from a record boundary to the end are the space the
                // writer preallocates, not damage; no record can hide in them
                // (type 0 is invalid), so nothing later needs a search.
                let zeroTail: Bool
                do { zeroTail = try isZeroFilled(from: offset) } catch { throw ioError(error) }
                if zeroTail {
                    // Format 2.2: zeros to an end no preallocation sets are
                    // the closed journal's last records, turned to zeros.
                    if let closed = closedEndDamage(damage, header: header) {
                        report.status = .corrupt(offset: offset, damage: closed)
                        return report
                    }
                    report.preallocatedBytes = fileSize - offset
                    return report
                }
                if header.hasSyncHorizons {
                    do { report.status = try classifyFormat2(damage, at: offset, header: header, expectedSequence: expected) } catch { throw ioError(error) }
                } else {
                    report.status = try classifyFormat1(damage, at: offset, generation: header.generation, expectedSequence: expected)
                }
                report.searchWork = searchWork
                return report
            case .record(let frame, let payloadLength):
                guard frame.sequence == expected else {
                    countRun()
                    report.status = .corrupt(offset: offset, damage: .sequenceMismatch(expected: expected, found: frame.sequence))
                    return report
                }
                if frame.reserved != 0 {
                    countRun()
                    report.status = .unsupported(offset: offset, reason: .reservedField(value: frame.reserved, sequence: frame.sequence))
                    return report
                }
                if !frame.type.isSkippable, let understands, !understands(frame.type) {
                    countRun()
                    report.status = .unsupported(offset: offset, reason: .recordType(frame.type.rawValue, sequence: frame.sequence))
                    return report
                }
                let record = JournalRecord(offset: offset, sequence: frame.sequence, type: frame.type,
                                           payload: window.copy(offset + Int64(frameHeaderLength), payloadLength),
                                           syncHorizon: header.hasSyncHorizons ? frame.horizon : nil)
                try visit(record)
                report.recordCount += 1
                if run?.type == frame.type { run!.count += 1 } else {
                    countRun()
                    run = (frame.type, 1)
                }
                report.lastSequence = frame.sequence
                offset += Int64(frameHeaderLength + payloadLength)
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
    mutating func probe(at offset: Int64, header: JournalHeader) throws(SystemError) -> Probe {
        header.hasSyncHorizons
            ? try probeFormat2(at: offset, generation: header.generation, headerLength: Int64(header.headerLength))
            : try probeFormat1(at: offset, generation: header.generation)
    }

    /// A format-1.x frame: one checksum over header and payload.
    mutating func probeFormat1(at offset: Int64, generation: UInt64) throws(SystemError) -> Probe {
        let headerLength = JournalFormat.version1RecordHeaderLength
        let remaining = window.fileSize - offset
        if remaining <= 0 { return .end }
        let headerBytes = try window.load(offset, headerLength)
        if headerBytes < headerLength {
            return .damage(.incompleteRecordHeader(available: headerBytes))
        }
        let frame = window.withBytes(offset, headerLength) { RecordFrame.Header(version1: $0, at: 0) }
        if Int(frame.length) > JournalFormat.maximumPayloadLength { return .damage(.impossibleLength(frame.length)) }
        let total = headerLength + Int(frame.length)
        if Int64(total) > remaining {
            return .damage(.incompletePayload(declared: frame.length, available: Int(remaining) - headerLength))
        }
        let loaded = try window.load(offset, total)
        if loaded < total { return .damage(.incompletePayload(declared: frame.length, available: loaded - headerLength)) }
        let crc = window.withBytes(offset + 4, total - 4) { CRC32C.checksum($0) }
        if CRC32C.mask(crc) != frame.checksum { return .damage(.checksumMismatch) }
        if frame.generation != generation { return .damage(.foreignGeneration(frame.generation)) }
        if frame.type == .invalid { return .damage(.invalidRecordHeader) }
        return .record(frame, payloadLength: Int(frame.length))
    }

    /// A format-2 frame: the header verifies on its own, then the payload.
    /// A header that verifies but names another generation, an impossible
    /// length, type 0 or a horizon past its own offset was written by no
    /// interrupted append of this file: that is ``Probe/impossible(_:)``.
    mutating func probeFormat2(at offset: Int64, generation: UInt64, headerLength fileHeaderLength: Int64 = Int64(JournalFormat.headerLength)) throws(SystemError) -> Probe {
        let headerLength = JournalFormat.recordHeaderLength
        let remaining = window.fileSize - offset
        if remaining <= 0 { return .end }
        let headerBytes = try window.load(offset, headerLength)
        if headerBytes < headerLength {
            return .damage(.incompleteRecordHeader(available: headerBytes))
        }
        let verified = window.withBytes(offset, headerLength) { RecordFrame.headerVerifies($0, at: 0) }
        if !verified { return .damage(.recordHeaderChecksumMismatch) }
        let frame = window.withBytes(offset, headerLength) { RecordFrame.Header($0, at: 0) }
        if frame.generation != generation { return .impossible(.foreignGeneration(frame.generation)) }
        if Int(frame.length) > JournalFormat.maximumPayloadLength { return .impossible(.impossibleLength(frame.length)) }
        if frame.type == .invalid { return .impossible(.invalidRecordHeader) }
        if frame.horizon < fileHeaderLength || frame.horizon > offset { return .impossible(.horizonBeyondRecord(horizon: frame.horizon)) }
        if frame.length == 0 && frame.payloadChecksum != Self.emptyPayloadChecksum {
            return .impossible(.emptyPayloadChecksum(frame.payloadChecksum))
        }
        let total = headerLength + Int(frame.length)
        if Int64(total) > remaining {
            return .damage(.incompletePayload(declared: frame.length, available: Int(remaining) - headerLength))
        }
        let loaded = try window.load(offset, total)
        if loaded < total { return .damage(.incompletePayload(declared: frame.length, available: loaded - headerLength)) }
        let crc = window.withBytes(offset + Int64(headerLength), Int(frame.length)) { CRC32C.checksum($0) }
        if CRC32C.mask(crc) != frame.payloadChecksum { return .damage(.checksumMismatch) }
        return .record(frame, payloadLength: Int(frame.length))
    }

    /// Every record of the file's generation that verifies on its own after
    /// `offset`, for salvage and inspection. In format 2 a record's payload
    /// is stepped over once its header verifies, so a frame inside another
    /// record is never reported. In 1.x the records wholly inside the
    /// damaged record at `offset` are left out when it is one an
    /// interrupted append leaves, as the search that classified the damage
    /// left them out: the first record reported is the one the corruption names.
    /// `expectedSequence` is the sequence the damaged record should carry.
    mutating func validRecords(after offset: Int64, header: JournalHeader, expectedSequence: UInt64) throws -> [JournalRecord] {
        var records: [JournalRecord] = []
        if header.hasSyncHorizons {
            var found: [Int64] = []
            do {
                // A damaged record whose header verifies is stepped over whole.
                var start = offset + 1
                switch try probeFormat2(at: offset, generation: header.generation) {
                case .damage(.checksumMismatch), .damage(.incompletePayload):
                    let length = window.withBytes(offset, JournalFormat.recordHeaderLength) { RecordFrame.Header($0, at: 0).length }
                    start = offset + Int64(JournalFormat.recordHeaderLength) + Int64(length)
                default:
                    break
                }
                try forEachVerifiedHeader(from: start, generation: header.generation) { at, _ in
                    found.append(at)
                    return true
                }
                for at in found {
                    if case .record(let frame, let length) = try probeFormat2(at: at, generation: header.generation) {
                        records.append(JournalRecord(offset: at, sequence: frame.sequence, type: frame.type,
                                                     payload: window.copy(at + Int64(JournalFormat.recordHeaderLength), length),
                                                     syncHorizon: frame.horizon))
                    }
                }
            } catch { throw ioError(error) }
            return records
        }
        // Greedy, as the records follow one another: each record found is
        // stepped over whole, so a frame inside its payload is not reported.
        do {
            var free = offset + 1
            var excused: Range<Int64>?
            if case .damage(let damage) = try probeFormat1(at: offset, generation: header.generation),
               let end = try tornFormat1Extent(damage, at: offset, generation: header.generation, expectedSequence: expectedSequence) {
                excused = offset..<end
            }
            for at in try validFormat1Records(from: offset + 1, generation: header.generation, excusing: excused,
                                              firstOnly: false) where at >= free {
                if case .record(let frame, let length) = try probeFormat1(at: at, generation: header.generation) {
                    records.append(JournalRecord(offset: at, sequence: frame.sequence, type: frame.type,
                                                 payload: window.copy(at + Int64(JournalFormat.version1RecordHeaderLength), length)))
                    free = at + Int64(JournalFormat.version1RecordHeaderLength + length)
                }
            }
        } catch { throw ioError(error) }
        return records
    }

    /// The stored payload checksum of an empty payload.
    static let emptyPayloadChecksum = CRC32C.mask(CRC32C.checksum([UInt8]()))

    mutating func isZeroFilled(from offset: Int64) throws(SystemError) -> Bool {
        try firstNonZeroByte(from: offset) == nil
    }

    /// The offset of the first byte at or after `offset` that is not zero.
    mutating func firstNonZeroByte(from offset: Int64) throws(SystemError) -> Int64? {
        var at = offset
        while at < window.fileSize {
            let count = try window.load(at, FileWindow.chunk)
            if count == 0 { break }
            let index = window.withBytes(at, count) { raw in raw.firstIndex { $0 != 0 } }
            if let index { return at + Int64(index) }
            at += Int64(count)
        }
        return nil
    }
}
