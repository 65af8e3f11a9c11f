#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LockEngine
import SystemKit
import Testing

/// A temporary directory under /tmp for one lock test, with a home directory
/// owned by the child: `<root>/home/Applications/org.example.Demo`.
///
/// Removed afterwards: mounts below it are unmounted and immutable flags
/// cleared first, so a failed test leaves nothing behind.
struct LockSandbox: Sendable {
    let root: String
    let child: ChildUser

    var home: String { root + "/home" }
    var applications: String { home + "/Applications" }
    var app: String { applications + "/org.example.Demo" }

    /// A path inside the app directory.
    func app(_ relative: String) -> String { app + "/" + relative }

    /// Mounts a fresh `type` filesystem at `path`, owned by the child.
    func mount(_ type: String, at path: String) throws {
        try LockCommand.mustRun(["mount", "-t", type, "-o", "mode=0755", "none", path])
        try LockFiles.chown(path, child)
    }

    /// Makes a `type` filesystem (`xfs`, `btrfs`, `ext4`) in a sparse image
    /// file in the sandbox, loop-mounts it at `path`, owned by the child.
    func mountImage(_ type: String, at path: String) throws {
        let image = root + "/\(type).img"
        try LockCommand.mustRun(["truncate", "-s", "320M", image])
        try LockCommand.mustRun(["mkfs.\(type)", "-q", image])
        try LockCommand.mustRun(["mount", "-o", "loop", image, path])
        chmod(path, 0o755)
        try LockFiles.chown(path, child)
    }
}

/// Makes a sandbox with its home tree, owned by `child`, and removes it afterwards.
func withLockSandbox<R>(child: ChildUser, _ body: (LockSandbox) throws -> R) throws -> R {
    var template = Array("/tmp/fc-lock.XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard made != nil else { throw LockTestError("mkdtemp: errno \(errno)") }
    let root = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    defer { removeSandbox(root) }
    chmod(root, 0o755)
    let sandbox = LockSandbox(root: root, child: child)
    for directory in [sandbox.home, sandbox.applications] {
        try LockFiles.mkdir(directory, 0o755, owner: child)
    }
    return try body(sandbox)
}

private func removeSandbox(_ root: String) {
    let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
    let mounted = mounts.split(separator: "\n").compactMap { line -> String? in
        let fields = line.split(separator: " ")
        guard fields.count > 1, fields[1].hasPrefix(root + "/") else { return nil }
        return String(fields[1])
    }
    for point in mounted.sorted(by: { $0.count > $1.count }) {
        _ = try? LockCommand.run(["umount", "-l", point])
    }
    _ = try? LockCommand.run(["chattr", "-R", "-f", "-i", "-a", root])
    _ = try? LockCommand.run(["rm", "-rf", root])
}

/// Small file operations for building test trees, as root.
enum LockFiles {
    static func mkdir(_ path: String, _ mode: mode_t, owner: ChildUser? = nil) throws {
        guard Glibc.mkdir(path, mode) == 0 else { throw LockTestError("mkdir \(path): errno \(errno)") }
        chmod(path, mode)
        if let owner { try chown(path, owner) }
    }

    static func write(_ path: String, _ contents: String, _ mode: mode_t, owner: ChildUser? = nil) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw LockTestError("create \(path): errno \(errno)") }
        let bytes = Array(contents.utf8)
        let wrote = Glibc.write(fd, bytes, bytes.count)
        close(fd)
        guard wrote == bytes.count else { throw LockTestError("write \(path)") }
        if let owner { try chown(path, owner) }
        chmod(path, mode)
        waitUntilNoWriter(path)
    }

    /// Waits (up to 5 s) until nothing holds `path` open for writing: a
    /// process another test of this one starts holds a copy of every
    /// descriptor between its fork and its exec, close-on-exec or not, and a
    /// lock taken then would rightly call the file open for writing (asked
    /// as the lock asks, ``SystemKit/FileDescriptor/writers(releasingLease:)``).
    private static func waitUntilNoWriter(_ path: String) {
        guard let reader = try? FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) else { return }
        defer { reader.close() }
        for _ in 0..<250 {
            guard reader.writers(releasingLease: true) == .present else { return }
            usleep(20_000)
        }
    }

    static func symlink(_ target: String, at path: String, owner: ChildUser? = nil) throws {
        guard Glibc.symlink(target, path) == 0 else { throw LockTestError("symlink \(path): errno \(errno)") }
        if let owner { try chown(path, owner) }
    }

    /// `lchown`: a link's own owner, never its target's.
    static func chown(_ path: String, _ owner: ChildUser) throws {
        guard lchown(path, owner.uid, owner.gid) == 0 else { throw LockTestError("lchown \(path): errno \(errno)") }
    }

    static func status(_ path: String) throws -> stat {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw LockTestError("lstat \(path): errno \(errno)") }
        return info
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The inode flags of a file or directory (`FS_IOC_GETFLAGS`), or nil where unsupported.
    static func flags(_ path: String) -> CInt? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var value: CInt = 0
        return ioctl(fd, UInt(0x8008_6601), &value) == 0 ? value : nil
    }

    static func isImmutable(_ path: String) -> Bool {
        (flags(path) ?? 0) & 0x10 != 0
    }

    /// `chattr +i` or `-i`, as an administrator would.
    static func chattr(_ change: String, _ path: String) throws {
        try LockCommand.mustRun(["chattr", change, path])
    }
}
