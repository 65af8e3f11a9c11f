#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import LockEngine
import SystemKit

/// A new version of an approved child app, staged by the app (or its
/// updater, running as the child) beside the approved folder as
/// `ROOT/.APPID.update`: the Guard takes no path from the call, so a name
/// the child passes can never point it elsewhere.
///
/// Opened by descriptor from the folder holding the approved version, never
/// through a link, and accepted only when it is the child's, not writable by
/// everyone, and on the approved folder's filesystem (the swap is one
/// rename). Its lock is journaled under ``lockKey``, so a Guard killed while
/// it is locked finds it again on restart, and releases it if the swap never
/// happened.
package struct StagedUpdate: Sendable {
    package let appID: String
    /// The folder holding both versions (ROOT).
    package let parent: OpenedDirectory
    /// The approved version, as identified with the calling process.
    package let approved: OpenedDirectory
    /// The staged version, `.APPID.update` in ``parent``.
    package let staged: OpenedDirectory

    /// The staged folder's name, and the key its lock is journaled under.
    static func lockKey(for appID: String) -> String { ".\(appID).update" }

    package var lockKey: String { Self.lockKey(for: appID) }
    /// Where the approved version is, and the new one will be.
    package var appPath: String { Self.join(parent.path, appID) }
    /// Where the staged version is, and the old one will be.
    package var stagedPath: String { Self.join(parent.path, lockKey) }

    /// The version the app staged beside `directory` (its approved folder
    /// at `path`), for `user`.
    /// - Throws: ``GuardFailure`` (`invalidArgument`) saying what is wrong
    ///   with the staged folder: missing, a link, not a folder, another
    ///   user's, writable by everyone, on another filesystem; or that the
    ///   approved folder is no longer where it was identified.
    package static func open(appID: String, approved: OpenedDirectory, path: String, user: UserAccount) throws(GuardFailure) -> StagedUpdate {
        let name = lockKey(for: appID)
        let parentPath = parent(of: path)
        let parent: OpenedDirectory
        do throws(LockError) {
            parent = try OpenedDirectory.open(parentPath)
        } catch {
            throw GuardFailure(.invalidArgument, "the folder holding \(appID) cannot be opened: \(error)")
        }
        let there: FileStatus
        do throws(Errno) {
            there = try parent.status(ofChild: appID)
        } catch {
            throw GuardFailure(.invalidArgument, "\(DisplayText.sanitized(path)) cannot be read: \(error)")
        }
        guard FileIdentity(there) == approved.identity else {
            throw GuardFailure(.invalidArgument, "the approved folder of \(appID) is no longer at "
                + "\(DisplayText.sanitized(path)); run the app from its folder and ask again")
        }
        let staged: OpenedDirectory
        do throws(LockError) {
            staged = try parent.openDirectory(name)
        } catch {
            let shown = DisplayText.sanitized(join(parentPath, name))
            switch error {
            case .directoryNotFound:
                throw GuardFailure(.invalidArgument, "no update is staged: put the new version in \(shown)")
            case .symbolicLinkInPath:
                throw GuardFailure(.invalidArgument, "\(shown) is a symbolic link; stage the new version in a folder of that name")
            case .notADirectory:
                throw GuardFailure(.invalidArgument, "\(shown) is not a folder; stage the new version in a folder of that name")
            default:
                throw GuardFailure(.invalidArgument, "\(shown) cannot be opened: \(error)")
            }
        }
        let shown = DisplayText.sanitized(staged.path)
        if let problem = staged.ownershipProblem(uid: user.uid) {
            throw GuardFailure(.invalidArgument, "\(shown) cannot be staged as an update of \(appID): \(problem)")
        }
        guard staged.status.device == approved.status.device else {
            throw GuardFailure(.invalidArgument, "\(shown) is on another filesystem than \(DisplayText.sanitized(path)); "
                + "stage the update beside the app so it can be swapped in by one rename")
        }
        return StagedUpdate(appID: appID, parent: parent, approved: approved, staged: staged)
    }

    /// Before the swap (`swapped` false): whether `ROOT/APPID` holds the
    /// approved version and `ROOT/.APPID.update` the staged one. After it:
    /// whether `ROOT/APPID` holds the staged version (the old one may have
    /// been moved by the child meanwhile; it is released wherever it is).
    /// - Throws: ``GuardFailure`` when they do not.
    package func checkNames(swapped: Bool) throws(GuardFailure) {
        do throws(Errno) {
            let atApp = FileIdentity(try parent.status(ofChild: appID))
            var inPlace = atApp == (swapped ? staged.identity : approved.identity)
            if inPlace, !swapped { inPlace = FileIdentity(try parent.status(ofChild: lockKey)) == staged.identity }
            guard inPlace else { throw Errno(EBUSY, operation: "compare") }
        } catch {
            throw GuardFailure(.invalidArgument, "the folders \(appID) and \(lockKey) in "
                + "\(DisplayText.sanitized(parent.path)) were moved while the update was under way; nothing was swapped")
        }
    }

    package static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    package static func join(_ parent: String, _ name: String) -> String {
        parent == "/" ? "/" + name : parent + "/" + name
    }
}
