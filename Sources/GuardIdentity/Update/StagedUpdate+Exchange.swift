#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import LockEngine
import SystemKit

// The swap of two locked versions. A rename needs both top folders without
// the immutable attribute, and the child owns them: with the attribute
// cleared, a process of the child's holding a descriptor on either could
// add an entry, or open it to others with chmod or an ACL. So for the
// rename both folders are root's, with no write bit for group or others;
// they go back to the child, locked, after it. What the child can still add
// is confined to the moment between clearing the attribute and taking the
// folder (and between giving it back and locking it): each folder's names
// are compared with what was locked before the swap, after each of those
// moments, and whatever else is there is moved out of it, into the app root,
// until they match.
extension StagedUpdate {
    /// What a top folder held, and was, while it was locked before the swap.
    private struct Locked {
        let folder: OpenedDirectory
        let names: Set<FileName>
        let uid: UInt32
        let gid: UInt32
        let permissions: UInt32
        let immutable: Bool
    }

    /// How many times a folder given back to the child is checked, and what
    /// was added to it moved out, before it is left root's (still locked).
    static let returnAttempts = 32

    /// Swaps the two versions' names in one step (`renameat2` with
    /// `RENAME_EXCHANGE`): `ROOT/APPID` holds one whole version before and
    /// after, and each top folder holds after the swap exactly the names it
    /// held while locked before it.
    /// - Parameter logger: where a name moved out of a folder is told.
    /// - Throws: ``GuardFailure`` when the names no longer hold the two
    ///   versions (nothing is swapped then) or the rename fails.
    package func exchange(logger: Logger) throws(GuardFailure) {
        try checkNames(swapped: false)
        let locked: [Locked]
        do throws(Errno) {
            locked = try [approved, staged].map { folder throws(Errno) in
                let status = try folder.currentStatus()
                return Locked(folder: folder, names: try folder.names(), uid: status.uid, gid: status.gid,
                              permissions: status.mode & 0o7777, immutable: try folder.isImmutable())
            }
        } catch {
            throw GuardFailure(.unavailable, "the new version of \(appID) could not be swapped in: its folders cannot "
                + "be read: \(error); the approved version stays")
        }
        var taken: [Locked] = []
        defer {
            // Whatever happened, each folder taken goes back to the child, locked as it was.
            for folder in taken { give(back: folder, logger: logger) }
        }
        do throws(Errno) {
            for folder in locked {
                try take(folder)
                taken.append(folder)
            }
            for folder in locked { moveOutAdded(to: folder, logger: logger) }
            UpdatePause.at("swap-taken", logger: logger)
            try parent.exchange(appID, lockKey)
        } catch {
            let hint = error.rawValue == EACCES
                ? " (the Guard needs CAP_DAC_OVERRIDE to rename in the child's app root; see familycontrolsd.service)" : ""
            throw GuardFailure(.unavailable, "the new version of \(appID) could not be swapped in: \(error)\(hint); "
                + "the approved version stays")
        }
    }

    /// Takes `folder` out of the child's reach for the rename: without the
    /// immutable attribute, then root's with no write bit but the owner's
    /// (which also caps an ACL's entries). Owner and mode cannot change while
    /// it is immutable, so the attribute goes first; whatever the child did
    /// in the moment between, an entry added is what
    /// ``moveOutAdded(to:logger:)`` moves out, and a mode or ACL it set is
    /// overwritten here.
    private func take(_ folder: Locked) throws(Errno) {
        if folder.immutable { try folder.folder.setImmutable(false) }
        try folder.folder.setOwner(uid: 0, gid: 0, permissions: folder.permissions & ~0o7022)
    }

    /// Gives `folder` back to the child, as it was and locked: its mode while
    /// still root's, then its owner, then the attribute, so the moment the
    /// child could add to it is one system call long. Then its names are
    /// compared with what was locked, and whatever was added in that moment
    /// is moved out and the folder given back again, at most
    /// ``returnAttempts`` times; a child that adds every time leaves it
    /// root's and locked, which holds the app just as well.
    private func give(back folder: Locked, logger: Logger) {
        for attempt in 1...Self.returnAttempts {
            do throws(Errno) {
                try folder.folder.setOwner(uid: 0, gid: 0, permissions: folder.permissions)
                try folder.folder.setOwner(uid: folder.uid, gid: folder.gid)
                if attempt == 1 { UpdatePause.at("swap-given-back", logger: logger) }
                if folder.immutable { try folder.folder.setImmutable(true) }
                guard try folder.folder.names() != folder.names else { return }
                logger.warning("update: \(DisplayText.sanitized(folder.folder.path)) was added to by another process "
                    + "as it was given back (attempt \(attempt)); taking it again")
                try take(folder)
                moveOutAdded(to: folder, logger: logger)
            } catch {
                logger.error("update: \(DisplayText.sanitized(folder.folder.path)) could not be given back locked: \(error)")
                break
            }
        }
        do throws(Errno) {
            try take(folder)
            moveOutAdded(to: folder, logger: logger)
            if folder.immutable { try folder.folder.setImmutable(true) }
            logger.error("update: \(DisplayText.sanitized(folder.folder.path)) is left owned by root, locked: "
                + "another process kept adding to it as it was given back")
        } catch {
            logger.error("update: \(DisplayText.sanitized(folder.folder.path)) could not be locked again: \(error)")
        }
    }

    /// Moves every name in `folder` that was not there while it was locked
    /// into the app root, as `.APPID.added.N`, where the child finds it
    /// (nothing the child made is lost). Call while the folder is root's.
    private func moveOutAdded(to folder: Locked, logger: Logger) {
        guard let now = try? folder.folder.names() else { return }
        for name in now.subtracting(folder.names).sorted(by: { $0.display < $1.display }) {
            var moved = false
            for number in 1...64 where !moved {
                let newName = FileName(".\(appID).added.\(number)")
                do throws(Errno) {
                    try folder.folder.move(name, to: parent, as: newName)
                    moved = true
                    logger.warning("update: \(name.display), added to \(DisplayText.sanitized(folder.folder.path)) "
                        + "during the swap, was moved out to \(DisplayText.sanitized(Self.join(parent.path, newName.display)))")
                } catch where error.rawValue == EEXIST {
                    continue
                } catch {
                    logger.error("update: \(name.display), added to \(DisplayText.sanitized(folder.folder.path)) "
                        + "during the swap, could not be moved out: \(error)")
                    break
                }
            }
        }
    }
}
