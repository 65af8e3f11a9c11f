#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Testing

@Suite("Unix sockets")
struct SocketTests {
    @Test func peerCredentialsNameTheProcessAtTheOtherEnd() throws {
        var ends: [CInt] = [-1, -1]
        #expect(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        let mine = FileDescriptor(taking: ends[0])
        let peer = FileDescriptor(taking: ends[1])
        let credentials = try withExtendedLifetime(peer) { try Socket.peerCredentials(of: mine.rawValue) }
        #expect(credentials == PeerCredentials(pid: getpid(), uid: geteuid(), gid: getegid()))
    }

    @Test func peerCredentialsOfSomethingNotASocketIsENOTSOCK() throws {
        let pipe = try makePipe()
        #expect(throws: Errno(ENOTSOCK)) { try Socket.peerCredentials(of: pipe.read.rawValue) }
    }

    @Test func acceptGivesNilWhenNobodyWaitsAndANonBlockingCloseOnExecSocketWhenSomeoneDoes() throws {
        try withScratchDirectory { path in
            let address = try UnixSocketAddress(path: path + "/socket")
            let listener = try Socket.makeUnixStream(nonBlocking: true)
            try address.withSocketAddress { pointer, length throws(Errno) in
                _ = try retryingOnInterrupt("bind") { bind(listener.rawValue, pointer, length) }
            }
            #expect(listen(listener.rawValue, 4) == 0)
            #expect(try Socket.accept(listener.rawValue) == nil)

            let client = try Socket.makeUnixStream(nonBlocking: false)
            try address.withSocketAddress { pointer, length throws(Errno) in
                _ = try retryingOnInterrupt("connect") { connect(client.rawValue, pointer, length) }
            }
            let accepted = try #require(try Socket.accept(listener.rawValue))
            #expect(fcntl(accepted.rawValue, F_GETFD) & FD_CLOEXEC != 0)
            #expect(fcntl(accepted.rawValue, F_GETFL) & O_NONBLOCK != 0)
            #expect(try Socket.peerCredentials(of: accepted.rawValue).pid == getpid())
        }
    }

    @Test func acceptOnSomethingNotAListeningSocketIsEINVAL() throws {
        let socket = try Socket.makeUnixStream(nonBlocking: true)
        #expect(throws: Errno(EINVAL)) { try Socket.accept(socket.rawValue) }
    }

    @Test func aPeerPidfdPinsTheConnectingProcess() throws {
        var ends: [CInt] = [-1, -1]
        #expect(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        let mine = FileDescriptor(taking: ends[0])
        let peer = FileDescriptor(taking: ends[1])
        // Linux 6.5 and later; an older kernel answers nil.
        guard let pidfd = try withExtendedLifetime(peer, { try Socket.peerPIDFD(of: mine.rawValue) }) else { return }
        #expect(ProcessHandle.isAlive(pidfd: pidfd.rawValue))
        // The kernel names the process a pidfd refers to in its fdinfo.
        let info = try FileDescriptor.open("/proc/self/fdinfo/\(pidfd.rawValue)", O_RDONLY)
        var bytes = [UInt8](repeating: 0, count: 1024)
        let count = try bytes.withUnsafeMutableBytes { try info.read(into: $0) }
        let lines = String(decoding: bytes[..<count], as: UTF8.self).split(separator: "\n")
        #expect(lines.contains("Pid:\t\(getpid())"), "\(lines)")
    }

    @Test func sendingToAClosedPeerIsEPIPEAndAFullBufferSendsNothing() throws {
        var ends: [CInt] = [-1, -1]
        #expect(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        let mine = FileDescriptor(taking: ends[0])
        let peer = FileDescriptor(taking: ends[1])
        let chunk = [UInt8](repeating: 0x41, count: 64 * 1024)
        var total = 0
        while true {
            let sent = try chunk.withUnsafeBytes { try Socket.sendNonBlocking(mine.rawValue, $0) }
            if sent == 0 { break }
            total += sent
        }
        #expect(total > 0)
        peer.close()
        #expect(throws: Errno(EPIPE)) { try chunk.withUnsafeBytes { try Socket.sendNonBlocking(mine.rawValue, $0) } }
    }
}

@Suite("Filesystem types")
struct FileSystemTypeTests {
    @Test("the named types keep <linux/magic.h>'s numbers and their short names", arguments: [
        (FileSystemType.ext4, UInt64(0xEF53), "ext2/3/4"),
        (.btrfs, 0x9123_683E, "btrfs"),
        (.xfs, 0x5846_5342, "xfs"),
        (.tmpfs, 0x0102_1994, "tmpfs"),
        (.ramfs, 0x8584_58F6, "ramfs"),
        (.nfs, 0x6969, "nfs"),
        (.fuse, 0x6573_5546, "fuse"),
        (.overlay, 0x794C_7630, "overlayfs"),
        (FileSystemType(rawValue: 0x2FC1_2FC1), 0x2FC1_2FC1, "zfs"),
        (FileSystemType(rawValue: 0x1234_5678), 0x1234_5678, "0x12345678"),
    ])
    func namedTypes(type: FileSystemType, magic: UInt64, name: String) {
        #expect(type.rawValue == magic)
        #expect(type.description == name)
    }

    @Test(arguments: [("/proc", "proc"), ("/sys", "sysfs")])
    func theKernelsOwnFilesystemsAreRecognized(path: String, name: String) throws {
        let directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
        #expect(try directory.fileSystemType().description == name)
    }
}
