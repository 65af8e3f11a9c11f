import Foundation
import SystemKit
import TestSupport
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

/// Creates a throwaway user (no password, no home) for `body` and deletes it afterwards.
func withChildUser<R>(_ body: (ChildUser) throws -> R) throws -> R {
    let user = try makeThrowawayUser(prefix: "c", password: false)
    defer { removeThrowawayUser(user) }
    return try body(ChildUser(name: user.name, uid: user.uid, gid: user.gid))
}
