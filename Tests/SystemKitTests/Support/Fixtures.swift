#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SystemKit
import Testing

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A fresh directory under /tmp (ext4 or whatever backs it here), removed with
/// everything in it afterwards, inode flags cleared first so an immutable file
/// left by a failing test cannot keep it.
func withScratchDirectory<R>(_ body: (String) throws -> R) throws -> R {
    var template = Array("/tmp/systemkit-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } }
    guard let made else { throw FixtureError("mkdtemp: errno \(errno)") }
    let path = String(cString: made)
    defer {
        clearInodeFlags(under: path)
        try? FileManager.default.removeItem(atPath: path)
    }
    return try body(path)
}

private func clearInodeFlags(under path: String) {
    guard let directory = try? FileDescriptor.open(path, O_RDONLY | O_DIRECTORY),
          let entries = try? directory.readDirectory() else { return }
    for entry in entries where entry.type == .regular {
        guard let file = try? directory.openChild(entry.name, flags: O_RDONLY | O_NONBLOCK),
              let flags = try? file.flags(), !flags.isDisjoint(with: [.immutable, .appendOnly]) else { continue }
        try? file.setFlags(flags.subtracting([.immutable, .appendOnly]))
    }
}

/// Creates an empty regular file.
func makeFile(_ path: String, mode: mode_t = 0o600) throws {
    _ = try FileDescriptor.open(path, O_CREAT | O_EXCL | O_WRONLY, mode: mode)
}

/// A pipe's two ends, each closed when released.
func makePipe() throws -> (read: FileDescriptor, write: FileDescriptor) {
    var ends: [CInt] = [-1, -1]
    guard pipe(&ends) == 0 else { throw Errno.current("pipe") }
    // pipe2 is declared only under _GNU_SOURCE; children started here get what they need by dup2.
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return (FileDescriptor(taking: ends[0]), FileDescriptor(taking: ends[1]))
}

/// A child process (started with `posix_spawn(3)`, or forked), killed and
/// reaped if the test leaves it running.
final class ChildProcess {
    let pid: pid_t
    private var reaped = false

    /// Takes charge of a child the test forked itself.
    init(adopting pid: pid_t) {
        self.pid = pid
    }

    /// Starts `arguments[0]` (a full path) with `arguments`, passing it each
    /// of `descriptors` (its number in the child: the parent's descriptor).
    init(_ arguments: [String], descriptors: [CInt: CInt] = [:]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (number, descriptor) in descriptors { posix_spawn_file_actions_adddup2(&actions, descriptor, number) }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard result == 0 else { throw Errno(result, operation: "posix_spawn \(arguments[0])") }
        self.pid = pid
    }

    /// Waits up to `timeout` for the process to exit and reaps it.
    /// - Returns: its exit status, or nil when it was killed by a signal.
    /// - Throws: when it is still running at the deadline (it is then killed).
    func waitForExit(timeout: Duration = .seconds(20)) throws -> CInt? {
        let deadline = ContinuousClock.now + timeout
        var status: CInt = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result < 0 && errno != EINTR { throw Errno.current("waitpid") }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                reaped = true
                throw FixtureError("process \(pid) still running after \(timeout)")
            }
            usleep(5_000)
        }
        reaped = true
        // WIFEXITED / WEXITSTATUS, which Swift does not import as macros.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
    }

    deinit {
        guard !reaped else { return }
        kill(pid, SIGKILL)
        var status: CInt = 0
        _ = waitpid(pid, &status, 0)
    }
}

/// Runs a program to completion and returns its exit status (nil if a signal ended it).
func run(_ arguments: [String]) throws -> CInt? {
    try ChildProcess(arguments).waitForExit()
}

/// The first whitespace-separated field `lsattr -d` prints for `path`
/// (`----i---------e-------`), or nil when lsattr fails.
func lsattrFlags(_ path: String) throws -> String? {
    let output = try makePipe()
    let lsattr = try ChildProcess(["/usr/bin/lsattr", "-d", path], descriptors: [1: output.write.rawValue])
    output.write.close()
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 256)
    while true {
        let count = try chunk.withUnsafeMutableBytes { try output.read.read(into: $0) }
        if count == 0 { break }
        bytes += chunk[..<count]
    }
    guard try lsattr.waitForExit() == 0 else { return nil }
    return String(decoding: bytes, as: UTF8.self).split(separator: " ").first.map(String.init)
}
