import Foundation
import Testing
@testable import Varlink
@testable import VarlinkClientKit
@testable import VarlinkServerKit

@Suite("Server: sockets, peers and lifecycle")
struct ServerLifecycleTests {
    @Test func peerCredentialsComeFromTheKernel() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            let peer = try client.call("org.example.test.WhoAmI")["peer"]
            #expect(peer?["uid"]?.intValue == Int64(getuid()))
            #expect(peer?["gid"]?.intValue == Int64(getgid()))
            #expect(peer?["pid"]?.intValue == Int64(getpid()))
            // Linux 6.5 and later pin the peer with a pidfd; it must name this process.
            if peer?["hasPIDFD"] == true, let pidfd = peer?["pidfd"]?.intValue {
                let info = try String(contentsOfFile: "/proc/self/fdinfo/\(pidfd)", encoding: .utf8)
                #expect(info.split(separator: "\n").contains("Pid:\t\(getpid())"))
            }
        }
    }

    @Test func thePidfdIsPresentOnKernelsThatSupportIt() throws {
        var release = utsname()
        uname(&release)
        let version = withUnsafeBytes(of: &release.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let parts = version.split(separator: ".").prefix(2).compactMap { Int($0.prefix { $0.isNumber }) }
        let supported = parts.count == 2 && (parts[0], parts[1]) >= (6, 5)
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            let peer = try client.call("org.example.test.WhoAmI")["peer"]
            #expect(peer?["hasPIDFD"]?.boolValue == supported, "kernel \(version)")
        }
    }

    @Test func theSocketGetsTheRequestedMode() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/socket"
            let server = try VarlinkServer(listeningOn: path, mode: 0o600, configuration: .testing(), service: try TestService())
            defer { server.shutdown() }
            var status = stat()
            #expect(stat(path, &status) == 0)
            #expect(status.st_mode & 0o777 == 0o600)
            #expect(status.st_mode & S_IFMT == S_IFSOCK)
        }
    }

    @Test func probeTellsAbsentLiveStaleAndNotASocket() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/socket"
            #expect(VarlinkServer.probeSocket(at: path) == .absent)
            let server = try VarlinkServer(listeningOn: path, configuration: .testing(), service: try TestService())
            #expect(VarlinkServer.probeSocket(at: path) == .live)
            server.shutdown()
            // A program another test starts at this moment holds a copy of the
            // listener until it executes; the socket is stale once that is gone.
            #expect(eventually { VarlinkServer.probeSocket(at: path) == .stale }, "\(VarlinkServer.probeSocket(at: path))")
            let stale = directory + "/stale"
            let descriptor = try makeStaleSocket(at: stale)
            defer { close(descriptor) }
            #expect(VarlinkServer.probeSocket(at: stale) == .stale)
            let file = directory + "/file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            #expect(VarlinkServer.probeSocket(at: file) == .notASocket)
        }
    }

    @Test func anExistingPathIsLeftToTheCaller() throws {
        try withServer { server, path, _ in
            #expect(throws: VarlinkServerError.addressInUse(path)) {
                try VarlinkServer(listeningOn: path, configuration: .testing(), service: try TestService())
            }
            #expect(VarlinkServer.probeSocket(at: path) == .live, "the running server's socket is untouched")
        }
    }

    @Test func aStaleSocketCanBeReplacedAfterTheProbe() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/socket"
            close(try makeStaleSocket(at: path))
            #expect(VarlinkServer.probeSocket(at: path) == .stale)
            #expect(unlink(path) == 0)
            let server = try VarlinkServer(listeningOn: path, configuration: .testing(), service: try TestService())
            defer { server.shutdown() }
            let client = try VarlinkClient(path: path)
            #expect(try client.call("org.example.test.Echo", parameters: ["value": "again"]) == ["value": "again"])
        }
    }

    @Test func aPathTooLongForSunPathIsRejected() throws {
        let path = "/tmp/" + String(repeating: "x", count: 200)
        #expect(throws: VarlinkServerError.invalidSocketPath(path)) {
            try VarlinkServer(listeningOn: path, configuration: .testing(), service: try TestService())
        }
    }

    @Test func adoptsAnAlreadyListeningSocket() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/activated"
            let descriptor = try makeListeningSocket(at: path)
            let server = try VarlinkServer(adoptingListener: descriptor, configuration: .testing(), service: try TestService())
            defer { server.shutdown() }
            #expect(server.path == nil)
            let client = try VarlinkClient(path: path)
            #expect(try client.call("org.example.test.Echo", parameters: ["value": "activated"]) == ["value": "activated"])
        }
    }

    @Test func refusesToAdoptSomethingElse() throws {
        let descriptor = open("/dev/null", O_RDONLY)
        defer { close(descriptor) }
        #expect(throws: VarlinkServerError.notAListeningSocket(descriptor)) {
            try VarlinkServer(adoptingListener: descriptor, configuration: .testing(), service: try TestService())
        }
    }

    @Test func shutdownIsIdempotentAndStopsAccepting() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/socket"
            let server = try VarlinkServer(listeningOn: path, configuration: .testing(), service: try TestService())
            server.shutdown()
            server.shutdown()
            // (Another test's new program may hold a copy of the listener for a moment.)
            #expect(eventually { VarlinkServer.probeSocket(at: path) == .stale })
            #expect(throws: VarlinkClientError.connectionRefused(path)) { try VarlinkClient(path: path) }
        }
    }
}

/// A Unix socket file nobody listens on, as a crashed server leaves behind:
/// bound but never listening, so connecting is refused for as long as it
/// lives, even if a program another test starts inherits a copy of it.
func makeStaleSocket(at path: String) throws -> CInt {
    try unixSocket(at: path, bind)
}

/// A listening Unix socket made the way systemd would pass one in.
func makeListeningSocket(at path: String, backlog: CInt = 16) throws -> CInt {
    let descriptor = try makeStaleSocket(at: path)
    guard listen(descriptor, backlog) == 0 else {
        let code = errno
        close(descriptor)
        throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }
    return descriptor
}
