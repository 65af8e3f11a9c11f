import FamilyControlsModel
import Foundation
import GuardKit
import SystemKit
import Testing
import LockEngine
import SQLite
import GuardStore

/// Makes a fresh directory under /tmp, runs `body` with its path, and removes it.
func withTemporaryStoreDirectory<R>(_ body: (String) throws -> R) throws -> R {
    var template = Array("/tmp/fc-store.XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard made != nil else { throw StoreFixtureError("mkdtemp failed: errno \(errno)") }
    let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Opens a store in a fresh `store` directory (which `Store.open` creates) and
/// runs `body` with it and the directory's path.
func withStore<R>(_ body: (Store, String) throws -> R) throws -> R {
    try withTemporaryStoreDirectory { temporary in
        let directory = temporary + "/store"
        let store = try Store.open(directory: directory, logger: .quiet)
        return try body(store, directory)
    }
}

struct StoreFixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Logger {
    /// Keeps migration notices out of the test output.
    static let quiet = Logger(label: "store-test", minimumLevel: .error)
}

/// The permission bits of `path` (`st_mode & 07777`), without following a symlink.
func permissionBits(_ path: String) throws -> UInt32 {
    var info = stat()
    guard lstat(path, &info) == 0 else { throw StoreFixtureError("lstat \(path): errno \(errno)") }
    return info.st_mode & 0o7777
}

extension AuthorizationRecord {
    /// A child's approved authorization, with every field set.
    static func sample(
        user: String = "alice", appID: String = "org.example.Paint",
        status: AuthorizationStatus = .approved, member: FamilyControlsMember = .child,
        approvedBy: String? = "bob", seconds: Double = 1_700_000_000.25
    ) -> AuthorizationRecord {
        AuthorizationRecord(
            user: user, uid: 1001, appID: appID, member: member, status: status, approvedBy: approvedBy,
            updatedAt: UnixTime(seconds: seconds), appPath: "/opt/apps/\(appID)"
        )
    }
}

extension AuditEvent {
    /// An approval by `actor`, with every field set.
    static func sample(
        actor: String = "bob", action: AuditAction = .approve, user: String = "alice",
        appID: String? = "org.example.Paint", outcome: AuditOutcome = "success", seconds: Double = 1_700_000_000.5
    ) -> AuditEvent {
        AuditEvent(
            at: UnixTime(seconds: seconds), actor: actor, action: action, user: user, appID: appID,
            member: .child, outcome: outcome, detail: "guardian authenticated with pam_unix"
        )
    }
}

extension LockRecord {
    static func sample(user: String = "alice", appID: String = "org.example.Paint",
                       state: LockState = .locking) -> LockRecord {
        LockRecord(user: user, appID: appID, path: "/opt/apps/\(appID)", device: 2049, inode: 131_074, state: state)
    }
}

extension LockedEntry {
    static func sample(_ relativePath: String, kind: Kind = .regular, inode: UInt64 = 1) -> LockedEntry {
        LockedEntry(relativePath: relativePath, kind: kind, device: 2049, inode: inode,
                    uid: 1001, gid: 1001, mode: 0o644, wasImmutable: false)
    }
}

/// Reads one integer from the database file at `path` through a connection of its own.
func integer(_ sql: String, in path: String) throws -> Int64? {
    let database = try SQLiteDatabase(path: path, flags: [.readWrite])
    return try database.firstRow(sql) { $0.int64(at: 0) }
}
