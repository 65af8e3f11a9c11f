import SystemKit

/// Why the lock engine refused or failed an operation. Journal errors pass
/// through unchanged.
package enum LockError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The app directory path is not absolute, contains `..`, or is `/`.
    case invalidPath(String)
    /// A component of the app directory path is a symbolic link (the child
    /// controls its home, so a link there could point anywhere).
    case symbolicLinkInPath(String)
    /// A component of the app directory path is not a directory.
    case notADirectory(String)
    /// The app directory does not exist.
    case directoryNotFound(String)
    /// NSS knows no such user.
    case unknownUser(String)
    /// The journal has no lock for this user and app.
    case notLocked(user: String, appID: String)
    /// The locked directory is no longer at its recorded path, nor under any
    /// place searched for it.
    case directoryMissing(user: String, appID: String, lastPath: String)
    /// This app is already locked at another directory (device and inode differ).
    case lockedElsewhere(user: String, appID: String, path: String)
    /// The directory tree nests deeper than the engine walks.
    case treeTooDeep(path: String, limit: Int)
    /// The app directory holds more entries than one lock takes.
    case tooManyEntries(limit: Int)
    /// A system call failed on `path` (relative to the app directory, or absolute).
    case system(path: String, Errno)
    /// The Guard itself may not set the immutable attribute on `path`: it
    /// runs without `CAP_LINUX_IMMUTABLE` or `CAP_FOWNER`.
    case attributeNotPermitted(path: String, Errno)
    /// `path` is a file or folder another app's lock already covers: one
    /// inode is never locked for two apps, or lifting one would free both.
    case coveredByAnotherLock(path: String, user: String, appID: String)
    /// `path` is the child's file with hard links outside the app folder:
    /// the lock would freeze, and its unlock free, a file other names reach.
    case linkedOutside(path: String, links: UInt64, inside: Int)
    /// An unlock of this app left the flags of `left` behind (a lease held
    /// them) and is not finished: its record stays, `unlocking`, and the app
    /// cannot be locked again until it is.
    case unlockUnfinished(user: String, appID: String, path: String, left: [String])

    package var description: String {
        switch self {
        case .invalidPath(let path):
            "invalid app directory path '\(path)': it must be absolute, without '..', and not '/'"
        case .symbolicLinkInPath(let path):
            "refusing to lock through a symbolic link: '\(path)'"
        case .notADirectory(let path):
            "'\(path)' is not a directory"
        case .directoryNotFound(let path):
            "app directory '\(path)' does not exist"
        case .unknownUser(let user):
            "no such user '\(user)'"
        case .notLocked(let user, let appID):
            "no lock is recorded for \(appID) of \(user)"
        case .directoryMissing(let user, let appID, let lastPath):
            "the locked directory of \(appID) of \(user) is no longer at '\(lastPath)' and was not found elsewhere"
        case .lockedElsewhere(let user, let appID, let path):
            "\(appID) of \(user) is already locked at '\(path)', a different directory"
        case .treeTooDeep(let path, let limit):
            "'\(path)' nests more than \(limit) directories deep"
        case .tooManyEntries(let limit):
            "the app directory holds more than \(limit) entries, more than one lock takes"
        case .system(let path, let errno):
            "\(path.isEmpty ? "app directory" : "'\(path)'"): \(errno)"
        case .attributeNotPermitted(let path, let errno):
            "\(path): the Guard may not make it immutable (\(errno)); it needs CAP_LINUX_IMMUTABLE and CAP_FOWNER"
        case .coveredByAnotherLock(let path, let user, let appID):
            "\(path.isEmpty ? "the app folder" : "'\(path)'") is already locked for \(appID) of \(user): "
                + "one file or folder is never locked for two apps; revoke \(appID) first"
        case .linkedOutside(let path, let links, let inside):
            "\(path): has \(links) hard links, \(links - UInt64(inside)) of them outside the app folder: "
                + "locking it would lock the file those names lead to as well, so the app is not locked; "
                + "remove the other names (or copy the file) and ask again"
        case .unlockUnfinished(let user, let appID, let path, let left):
            "the unlock of \(appID) of \(user) at '\(path)' is not finished: \(left.count) entries stay immutable "
                + "(\(left.prefix(3).joined(separator: ", "))\(left.count > 3 ? ", …" : "")); `familyctl locks verify` "
                + "finishes it once they can be changed"
        }
    }
}
