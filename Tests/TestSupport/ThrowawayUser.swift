import Foundation
import Synchronization
import SystemKit

/// A real Linux user made for one test and removed after it.
public struct ThrowawayUser: Sendable {
    public var name: String
    public var uid: UInt32
    public var gid: UInt32
    public var home: String
    /// The password set with `chpasswd`, or nil when the account has none.
    /// Tests pass it to PAM; it is never printed.
    public var password: String?

    /// An account made elsewhere (a directory's), which its maker removes.
    public init(name: String, uid: UInt32, gid: UInt32, home: String, password: String?) {
        self.name = name
        self.uid = uid
        self.gid = gid
        self.home = home
        self.password = password
    }
}

/// Whether this process may create users (root with `useradd`).
public var canManageUsers: Bool {
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")
}

/// A random password, printable so it can be typed on a line.
public func randomPassword() -> String {
    let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-_.")
    return String((0..<20).map { _ in alphabet.randomElement() ?? "x" })
}

/// Creates a user named `fc<prefix><random>` (no home unless `home` names
/// one, which the caller makes; `userdel -r` removes it; with `sharing`, an
/// account with that account's uid, `useradd -o -u`), runs `body`, and
/// removes the user.
public func withThrowawayUser<R>(
    prefix: String = "u", password: Bool = true, home: String? = nil, sharing uid: UInt32? = nil,
    _ body: (ThrowawayUser) async throws -> R
) async throws -> R {
    // useradd and userdel wait on each other: never on the cooperative pool.
    let user = try await offload { try makeThrowawayUser(prefix: prefix, password: password, home: home, sharing: uid) }
    return try await tearingDown(user, with: { removeThrowawayUser($0) }, body)
}

/// Creates a throwaway user whose home is `home` (not made here) or none,
/// with the uid `uid` shares when given; pair with ``removeThrowawayUser(_:)``.
public func makeThrowawayUser(prefix: String = "u", password: Bool = true, home: String? = nil,
                              sharing uid: UInt32? = nil) throws -> ThrowawayUser {
    let suffix = String(UInt32.random(in: 0..<UInt32.max), radix: 36)
    let name = "fc\(prefix)\(suffix)"
    let arguments = ["-s", "/bin/sh", "-U", "-M", "-d", home ?? "/nonexistent"] + (uid.map { ["-o", "-u", String($0)] } ?? [])
    try changeAccounts("/usr/sbin/useradd", arguments + [name])
    var secret: String?
    if password {
        let value = randomPassword()
        let set = try run("/usr/sbin/chpasswd", [], input: "\(name):\(value)\n")
        guard set.succeeded else {
            _ = try? run("/usr/sbin/userdel", ["-r", name])
            throw FixtureError("chpasswd for \(name) failed")
        }
        secret = value
    }
    guard let account = try UserDatabase.user(named: name) else {
        throw FixtureError("useradd made \(name) but NSS cannot see it")
    }

    return ThrowawayUser(name: name, uid: account.uid, gid: account.gid, home: account.home, password: secret)
}

/// Removes a user made by ``makeThrowawayUser(prefix:password:home:sharing:)``;
/// its processes are killed first unless another account has its uid.
public func removeThrowawayUser(_ user: ThrowawayUser) {
    let ownsUID = (try? UserDatabase.user(id: user.uid))??.name == user.name
    if ownsUID {
        _ = try? run("/usr/bin/pkill", ["-KILL", "-u", user.name])
        // While the uid is still this user's alone, not once userdel freed it for another.
        removeBusSockets(of: user.uid)
    }
    try? changeAccounts("/usr/sbin/userdel", ["-f", "-r", user.name])
}

/// The sockets a session bus of the user's (`dbus-run-session`) made in
/// /tmp: a bus killed with its user's processes leaves them behind.
private func removeBusSockets(of uid: UInt32) {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/tmp") else { return }
    for entry in entries where entry.hasPrefix("dbus-") {
        var status = stat()
        let path = "/tmp/\(entry)"
        guard lstat(path, &status) == 0, status.st_uid == uid, status.st_mode & S_IFMT == S_IFSOCK else { continue }
        unlink(path)
    }
}

/// Creates a group with the given members and removes it after `body`.
public func withThrowawayGroup<R>(members: [String], _ body: (String) async throws -> R) async throws -> R {
    let name = "fcg" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
    try await offload { try changeAccounts("/usr/sbin/groupadd", [name]) }
    defer { try? changeAccounts("/usr/sbin/groupdel", [name]) }
    for member in members {
        try await offload { try changeAccounts("/usr/sbin/usermod", ["-a", "-G", name, member]) }
    }
    return try await body(name)
}

/// useradd, userdel, groupadd and usermod lock /etc/passwd and /etc/group:
/// one at a time within this process, and retried while another process
/// holds the lock (exit status 10, or "lock" in the message).
private let accountChanges = Mutex(())

private func changeAccounts(_ tool: String, _ arguments: [String]) throws {
    try accountChanges.withLock { _ in
        var last = ProcessResult(status: -1, standardOutput: "", standardError: "")
        for attempt in 0..<40 {
            last = try run(tool, arguments) as ProcessResult
            if last.succeeded { return }
            guard last.status == 10 || last.standardError.contains("lock") else { break }
            usleep(useconds_t(50_000 + attempt * 10_000))
        }
        throw FixtureError("\(tool) \(arguments.joined(separator: " ")) failed (\(last.status)): \(last.standardError)")
    }
}

/// Adds `user` to the system group `group` for `body` (`usermod -a -G`),
/// creating the group first when the machine has none (and removing it
/// after); the membership ends with `body`.
public func withMembership<R>(of user: String, in group: String, _ body: () async throws -> R) async throws -> R {
    let created = try UserDatabase.group(named: group) == nil
    if created { try await offload { try changeAccounts("/usr/sbin/groupadd", ["-r", group]) } }
    defer {
        if created { try? changeAccounts("/usr/sbin/groupdel", [group]) } else { try? changeAccounts("/usr/bin/gpasswd", ["-d", user, group]) }
    }
    try await offload { try changeAccounts("/usr/sbin/usermod", ["-a", "-G", group, user]) }
    return try await body()
}
