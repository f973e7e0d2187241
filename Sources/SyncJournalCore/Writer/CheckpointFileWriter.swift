/// Writes the records of a checkpoint file as they are made: each is framed
/// into a buffer of a few megabytes, and the buffer goes to the file when it
/// is full. A checkpoint of a large state is hundreds of megabytes; it is
/// never held whole in memory, and the disk works while the rest is encoded.
package struct CheckpointFileWriter {
    private let io: FileIO
    private let fd: FileDescriptor
    private let path: String
    private let header: JournalHeader
    /// The new file claims nothing beyond its header until it is complete
    /// and synced, so every record carries this horizon.
    private let horizon: Int64
    private let chunkBytes: Int
    private var chunk: [UInt8]
    /// Where the buffer goes in the file.
    private var chunkOffset: Int64
    /// The sequence number of the next record.
    package private(set) var nextSequence: UInt64
    /// Records appended so far.
    package private(set) var recordCount = 0

    init(io: FileIO, fd: FileDescriptor, path: String, header: JournalHeader, chunkBytes: Int = 4 << 20) {
        self.io = io
        self.fd = fd
        self.path = path
        self.header = header
        self.chunkBytes = chunkBytes
        horizon = Int64(header.headerLength)
        nextSequence = header.firstSequence
        chunk = header.encoded()
        chunk.reserveCapacity(chunkBytes + JournalFormat.maximumPayloadLength / 8)
        chunkOffset = 0
    }

    /// The file's length once everything appended is written.
    var endOffset: Int64 { chunkOffset + Int64(chunk.count) }

    /// Appends one record.
    package mutating func append(type: RecordType, payload: [UInt8]) throws(JournalError) {
        if payload.count > JournalFormat.maximumPayloadLength {
            throw .recordTooLarge(bytes: payload.count, maximum: JournalFormat.maximumPayloadLength)
        }
        RecordFrame.encode(type: type, header: header, sequence: nextSequence, horizon: horizon, payload: payload, into: &chunk)
        nextSequence += 1
        recordCount += 1
        if chunk.count >= chunkBytes { try flush() }
    }

    /// Writes what the buffer holds.
    mutating func flush() throws(JournalError) {
        guard !chunk.isEmpty else { return }
        do throws(SystemError) { try io.writeAll(fd, chunk, at: chunkOffset, path: path) } catch { throw .io(error) }
        chunkOffset += Int64(chunk.count)
        chunk.removeAll(keepingCapacity: true)
    }
}
