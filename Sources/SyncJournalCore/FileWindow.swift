/// A read buffer over part of a file, so scanning a journal of any size uses
/// memory bounded by the largest record, not by the file.
struct FileWindow {
    let io: FileIO
    let fd: FileDescriptor
    let path: String
    let fileSize: Int64
    private(set) var start: Int64 = 0
    private(set) var bytes: [UInt8] = []
    static let chunk = 1 << 20

    init(io: FileIO, fd: FileDescriptor, path: String, fileSize: Int64) {
        self.io = io
        self.fd = fd
        self.path = path
        self.fileSize = fileSize
    }

    /// Makes `[offset, offset + count)` available (clamped to the file's end)
    /// and returns how many of those bytes exist.
    mutating func load(_ offset: Int64, _ count: Int) throws(SystemError) -> Int {
        let available = Int(min(Int64(count), max(0, fileSize - offset)))
        if offset >= start && offset + Int64(available) <= start + Int64(bytes.count) { return available }
        let size = Int(min(Int64(max(available, Self.chunk)), fileSize - offset))
        bytes = try io.read(fd, count: size, at: offset, path: path)
        start = offset
        // A file that shrank under us reads short: report only what is really there.
        return min(available, bytes.count)
    }

    /// Runs `body` over `count` loaded bytes at `offset`.
    func withBytes<R>(_ offset: Int64, _ count: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let from = Int(offset - start)
        return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[from..<(from + count)])) }
    }

    /// A copy of `count` loaded bytes at `offset`.
    func copy(_ offset: Int64, _ count: Int) -> [UInt8] {
        let from = Int(offset - start)
        return Array(bytes[from..<(from + count)])
    }
}
