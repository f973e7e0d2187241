import SyncJournalPlatform
import Testing

@Suite("Named errno values")
struct ErrnoTests {
    @Test("Every named errno prints its symbolic name, and the name gives back the same value")
    func namesRoundTrip() {
        var seen: Set<Errno> = []
        for (errno, name) in Errno.named {
            #expect(Errno(name: name) == errno, "\(name)")
            // A number shared by two names (EOPNOTSUPP is ENOTSUP on Linux) prints the first.
            if seen.insert(errno).inserted { #expect(errno.description == name) }
        }
    }

    @Test("EWOULDBLOCK is EAGAIN, and a number without a name prints as a number")
    func aliasesAndUnknownNumbers() {
        #expect(Errno(name: "EWOULDBLOCK") == .wouldBlock)
        #expect(Errno.wouldBlock.description == "EAGAIN")
        #expect(Errno(name: "ENOTANERROR") == nil)
        #expect(Errno(rawValue: 123_456).description == "errno 123456")
    }

    @Test("The platform's text for an errno is not empty")
    func messages() {
        #expect(!Errno.ioError.message.isEmpty)
        #expect(Errno.noSuchFile.message != Errno.ioError.message)
    }
}
