#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Testing

@Suite("epoll and eventfd")
struct EpollTests {
    @Test func aSignalledCounterWakesTheWaitWithItsRegistrationData() throws {
        let epoll = try Epoll()
        let counter = try EventCounter()
        let buffer = EpollEventBuffer(capacity: 4)
        // All 64 bits, so a misplaced data field cannot pass.
        let token: UInt64 = 0xFEED_FACE_0000_0001
        try epoll.add(counter.rawValue, events: .readable, data: token)
        #expect(try epoll.wait(into: buffer, timeout: 0) == 0)

        counter.signal()
        #expect(try epoll.wait(into: buffer, timeout: 5_000) == 1)
        #expect(buffer[0].events == .readable)
        #expect(buffer[0].data == token)

        counter.drain()
        #expect(try epoll.wait(into: buffer, timeout: 0) == 0)
    }

    @Test func everyEventOfAWaitComesBackWithItsOwnData() throws {
        let epoll = try Epoll()
        let counters = try (0..<3).map { _ in try EventCounter() }
        for (index, counter) in counters.enumerated() {
            try epoll.add(counter.rawValue, events: .readable, data: 100 + UInt64(index))
            counter.signal()
        }
        let buffer = EpollEventBuffer(capacity: 8)
        let count = try epoll.wait(into: buffer, timeout: 5_000)
        #expect(count == 3)
        #expect(Set((0..<count).map { buffer[$0].data }) == [100, 101, 102])
        #expect((0..<count).allSatisfy { buffer[$0].events == .readable })

        // A buffer smaller than what is ready takes what fits.
        let small = EpollEventBuffer(capacity: 2)
        #expect(try epoll.wait(into: small, timeout: 0) == 2)
    }

    @Test func modifyChangesWhatIsReportedAndRemoveStopsIt() throws {
        let epoll = try Epoll()
        let counter = try EventCounter()
        let buffer = EpollEventBuffer(capacity: 1)
        try epoll.add(counter.rawValue, events: .readable, data: 1)
        #expect(try epoll.wait(into: buffer, timeout: 0) == 0)

        // An eventfd below its maximum is always writable.
        try epoll.modify(counter.rawValue, events: .writable, data: 2)
        #expect(try epoll.wait(into: buffer, timeout: 5_000) == 1)
        #expect(buffer[0].events == .writable)
        #expect(buffer[0].data == 2)

        try epoll.remove(counter.rawValue)
        #expect(try epoll.wait(into: buffer, timeout: 0) == 0)
    }

    @Test func aClosedPeerReportsReadHangUp() throws {
        var ends: [CInt] = [-1, -1]
        #expect(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        let mine = FileDescriptor(taking: ends[0])
        let peer = FileDescriptor(taking: ends[1])
        let epoll = try Epoll()
        try epoll.add(mine.rawValue, events: [.readable, .readHangUp], data: 7)
        peer.close()
        let buffer = EpollEventBuffer(capacity: 1)
        #expect(try epoll.wait(into: buffer, timeout: 5_000) == 1)
        #expect(buffer[0].events.isSuperset(of: [.readable, .readHangUp, .hangUp]))
    }

    @Test func registeringTwiceIsEEXISTAndChangingWhatIsNotWatchedIsENOENT() throws {
        let epoll = try Epoll()
        let counter = try EventCounter()
        try epoll.add(counter.rawValue, events: .readable, data: 1)
        #expect(throws: Errno(EEXIST)) { try epoll.add(counter.rawValue, events: .readable, data: 1) }
        let other = try EventCounter()
        #expect(throws: Errno(ENOENT)) { try epoll.modify(other.rawValue, events: .readable, data: 1) }
        #expect(throws: Errno(ENOENT)) { try epoll.remove(other.rawValue) }
    }

    @Test func descriptorsAreCloseOnExecAndTheCounterNonBlocking() throws {
        let epoll = try Epoll()
        let counter = try EventCounter()
        #expect(fcntl(epoll.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(counter.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(counter.rawValue, F_GETFL) & O_NONBLOCK != 0)
        // Draining an empty non-blocking counter returns at once.
        counter.drain()
    }
}
