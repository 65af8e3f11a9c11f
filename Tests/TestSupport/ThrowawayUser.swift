import Foundation
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

/// Creates a user named `fc<prefix><random>` (home made under /tmp when
/// `home` is true), runs `body`, and removes the user and its home.
public func withThrowawayUser<R>(
    prefix: String = "u", password: Bool = true, home: Bool = false,
    _ body: (ThrowawayUser) async throws -> R
) async throws -> R {
    let user = try makeThrowawayUser(prefix: prefix, password: password, home: home)
    defer { removeThrowawayUser(user) }
    return try await body(user)
}

/// Creates a throwaway user; pair with ``removeThrowawayUser(_:)``.
public func makeThrowawayUser(prefix: String = "u", password: Bool = true, home: Bool = false) throws -> ThrowawayUser {
    let suffix = String(UInt32.random(in: 0..<UInt32.max), radix: 36)
    let name = "fc\(prefix)\(suffix)"
    var arguments = ["-s", "/bin/sh", "-U"]
    if home {
        let homePath = "/tmp/fc-home-\(name)"
        arguments += ["-m", "-d", homePath]
    } else {
        arguments += ["-M", "-d", "/nonexistent"]
    }
    let made = try run("/usr/sbin/useradd", arguments + [name])
    guard made.succeeded else { throw FixtureError("useradd \(name) failed: \(made.standardError)") }
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

/// Removes a user made by ``makeThrowawayUser(prefix:password:home:)``, with its home.
public func removeThrowawayUser(_ user: ThrowawayUser) {
    _ = try? run("/usr/bin/pkill", ["-KILL", "-u", user.name])
    _ = try? run("/usr/sbin/userdel", ["-f", "-r", user.name])
    if user.home.hasPrefix("/tmp/fc-home-") { try? FileManager.default.removeItem(atPath: user.home) }
}

/// Creates a group with the given members and removes it after `body`.
public func withThrowawayGroup<R>(members: [String], _ body: (String) async throws -> R) async throws -> R {
    let name = "fcg" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
    let made = try await run("/usr/sbin/groupadd", [name])
    guard made.succeeded else { throw FixtureError("groupadd \(name) failed: \(made.standardError)") }
    defer { removeGroup(name) }
    for member in members {
        let added = try await run("/usr/sbin/usermod", ["-a", "-G", name, member])
        guard added.succeeded else { throw FixtureError("usermod -a -G \(name) \(member) failed") }
    }
    return try await body(name)
}

private func removeGroup(_ name: String) {
    _ = try? run("/usr/sbin/groupdel", [name]) as ProcessResult
}
