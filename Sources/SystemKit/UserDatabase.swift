#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A user account as NSS reports it (`struct passwd`).
public struct UserAccount: Hashable, Sendable {
    public var name: String
    public var uid: uid_t
    public var gid: gid_t
    public var home: String
    public var shell: String

    public init(name: String, uid: uid_t, gid: gid_t, home: String, shell: String) {
        self.name = name
        self.uid = uid
        self.gid = gid
        self.home = home
        self.shell = shell
    }
}

/// A group as NSS reports it (`struct group`).
public struct GroupEntry: Hashable, Sendable {
    public var name: String
    public var gid: gid_t
    public var members: [String]
}

/// Reads users and groups through NSS, so `/etc/passwd`, LDAP, SSSD and the rest
/// all answer alike.
///
/// Maps to `getpwnam_r(3)`, `getpwuid_r(3)`, `getgrnam_r(3)`, `getgrgid_r(3)` and `getgrouplist(3)`.
public enum UserDatabase {
    /// The account named `name`, or nil when NSS knows no such user.
    /// - Throws: ``Errno`` when the lookup itself fails (an unreachable directory, say).
    public static func user(named name: String) throws(Errno) -> UserAccount? {
        try lookupUser("getpwnam_r \(name)") { pwd, buffer, size, result in
            getpwnam_r(name, pwd, buffer, size, result)
        }
    }

    /// The account named `name`, or nil only when every source NSS asks
    /// answered "no such user"; for a step that must not act on a "no" a
    /// source merely failed to give (`familyctl forget`).
    ///
    /// glibc returns 0 with no entry when every source in nsswitch.conf said
    /// not found, and the error a source left when one could not answer:
    /// `sss` with no SSSD to reach (its socket missing) leaves `ENOENT`,
    /// which ``user(named:)`` reads as "no such user", as the man page allows.
    /// - Throws: ``Errno`` when the lookup fails or a source did not answer.
    public static func userIfEverySourceAnswers(named name: String) throws(Errno) -> UserAccount? {
        try lookupUser("getpwnam_r \(name)", everySourceMustAnswer: true) { pwd, buffer, size, result in
            getpwnam_r(name, pwd, buffer, size, result)
        }
    }

    /// The account with user ID `uid`, or nil when NSS knows none.
    public static func user(id uid: uid_t) throws(Errno) -> UserAccount? {
        try lookupUser("getpwuid_r \(uid)") { pwd, buffer, size, result in
            getpwuid_r(uid, pwd, buffer, size, result)
        }
    }

    /// The group named `name`, or nil when NSS knows no such group.
    public static func group(named name: String) throws(Errno) -> GroupEntry? {
        try lookupGroup("getgrnam_r \(name)") { entry, buffer, size, result in
            getgrnam_r(name, entry, buffer, size, result)
        }
    }

    /// The group with group ID `gid`, or nil when NSS knows none (`getgrgid_r(3)`).
    public static func group(id gid: gid_t) throws(Errno) -> GroupEntry? {
        try lookupGroup("getgrgid_r \(gid)") { entry, buffer, size, result in
            getgrgid_r(gid, entry, buffer, size, result)
        }
    }

    /// Every account NSS lists (`/etc/passwd`, and LDAP or SSSD where they
    /// enumerate), in its order, at most `limit` of them; `complete` is false
    /// when there were more. Accounts sharing a uid each appear, which the
    /// lookups by name and uid cannot show.
    ///
    /// Maps to `setpwent(3)`, `getpwent_r(3)` and `endpwent(3)`; the
    /// enumeration is process-wide state, so calls are serialised.
    /// - Throws: ``Errno`` when the enumeration itself fails.
    public static func allUsers(limit: Int) throws(Errno) -> (accounts: [UserAccount], complete: Bool) {
        try enumeration.withLock { _ throws(Errno) in try enumerateUsers(limit: limit) }
    }

    private static func enumerateUsers(limit: Int) throws(Errno) -> (accounts: [UserAccount], complete: Bool) {
        setpwent()
        defer { endpwent() }
        var accounts: [UserAccount] = []
        var size = 4096
        var buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
        defer { buffer.deallocate() }
        while accounts.count < limit {
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            let code = getpwent_r(&entry, buffer, size, &result)
            if code == ERANGE, size < 1 << 24 {
                size *= 4
                buffer.deallocate()
                buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
                continue
            }
            if code == ENOENT { return (accounts, true) }
            if code != 0 { throw Errno(code, operation: "getpwent_r") }
            guard let found = result?.pointee else { return (accounts, true) }
            accounts.append(UserAccount(name: String(cString: found.pw_name), uid: found.pw_uid, gid: found.pw_gid,
                                        home: String(cString: found.pw_dir), shell: String(cString: found.pw_shell)))
        }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        return (accounts, getpwent_r(&entry, buffer, size, &result) != 0 || result == nil)
    }

    private static let enumeration = Mutex(())

    private static func lookupGroup(
        _ operation: String,
        _ call: (UnsafeMutablePointer<Glibc.group>, UnsafeMutablePointer<CChar>, Int,
                 UnsafeMutablePointer<UnsafeMutablePointer<Glibc.group>?>) -> CInt
    ) throws(Errno) -> GroupEntry? {
        var size = 1024
        while true {
            var entry = Glibc.group()
            var result: UnsafeMutablePointer<Glibc.group>?
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            let code = call(&entry, buffer, size, &result)
            if code == ERANGE, size < 1 << 24 { size *= 4; continue }
            if code != 0 && code != ENOENT { throw Errno(code, operation: operation) }
            guard let found = result?.pointee else { return nil }
            var members: [String] = []
            if var cursor = found.gr_mem {
                while let member = cursor.pointee {
                    members.append(String(cString: member))
                    cursor += 1
                }
            }
            return GroupEntry(name: String(cString: found.gr_name), gid: found.gr_gid, members: members)
        }
    }

    /// Every group ID `account` belongs to, its primary group included (`getgrouplist(3)`).
    public static func groupIDs(of account: UserAccount) -> [gid_t] {
        var count: CInt = 32
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            var found = count
            if getgrouplist(account.name, account.gid, &groups, &found) >= 0 {
                return Array(groups.prefix(Int(found)))
            }
            guard found > count else { return [account.gid] }
            count = found
        }
    }

    private static func lookupUser(
        _ operation: String, everySourceMustAnswer: Bool = false,
        _ call: (UnsafeMutablePointer<passwd>, UnsafeMutablePointer<CChar>, Int, UnsafeMutablePointer<UnsafeMutablePointer<passwd>?>) -> CInt
    ) throws(Errno) -> UserAccount? {
        var size = 1024
        while true {
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            let code = call(&entry, buffer, size, &result)
            if code == ERANGE, size < 1 << 24 { size *= 4; continue }
            // ENOENT, ESRCH, EBADF and EPERM all mean "not found" for these
            // calls, by the man page; in glibc only 0 means every source said so.
            if code != 0 && (everySourceMustAnswer || ![ENOENT, ESRCH, EBADF, EPERM].contains(code)) {
                throw Errno(code, operation: "\(operation) (a source in nsswitch.conf did not answer)")
            }
            guard let found = result?.pointee else { return nil }
            return UserAccount(
                name: String(cString: found.pw_name),
                uid: found.pw_uid,
                gid: found.pw_gid,
                home: String(cString: found.pw_dir),
                shell: String(cString: found.pw_shell)
            )
        }
    }
}

