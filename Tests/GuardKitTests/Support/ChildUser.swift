import Foundation
import Synchronization
import SystemKit
import Testing

/// A throwaway, unprivileged Linux user standing in for the child: a real
/// account (`useradd -M -N -s /usr/sbin/nologin`), so the kernel's permission
/// checks are the real ones.
struct ChildUser: Sendable {
    let name: String
    let uid: UInt32
    let gid: UInt32

    /// Runs `arguments` as this user, with no supplementary groups and no
    /// capabilities (`setpriv`), to completion.
    @discardableResult
    func run(_ arguments: [String]) throws -> LockCommandResult {
        try LockCommand.run(privilegeDrop + arguments)
    }

    /// Starts `arguments` as this user in the background.
    func start(_ arguments: [String]) throws -> Process {
        try LockCommand.start(privilegeDrop + arguments)
    }

    private var privilegeDrop: [String] {
        ["setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--inh-caps=-all", "--"]
    }
}

/// useradd and userdel lock /etc/passwd; one at a time within this process,
/// and retried when another process holds the lock.
private let accountChanges = Mutex(())

/// Creates a throwaway user named `fctest_<random>`, runs `body` with it, and
/// deletes the user afterwards.
func withChildUser<R>(_ body: (ChildUser) throws -> R) throws -> R {
    let name = "fctest_" + String(UInt64.random(in: 0..<UInt64.max), radix: 36)
    try changeAccounts(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", name])
    defer { try? changeAccounts(["userdel", name]) }
    guard let account = try UserDatabase.user(named: name) else { throw LockTestError("useradd made no \(name)") }
    return try body(ChildUser(name: name, uid: account.uid, gid: account.gid))
}

private func changeAccounts(_ arguments: [String]) throws {
    try accountChanges.withLock { _ in
        var last = LockCommandResult(status: -1, output: "")
        for attempt in 0..<40 {
            last = try LockCommand.run(arguments)
            if last.succeeded { return }
            // Exit 10 (useradd) or 10/1 with "lock" in the message: someone else holds /etc/passwd.
            guard last.output.contains("lock") || last.status == 10 else { break }
            usleep(useconds_t(50_000 + attempt * 10_000))
        }
        throw LockTestError("\(arguments.joined(separator: " ")): \(last)")
    }
}
