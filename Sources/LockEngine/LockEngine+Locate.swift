import SystemKit

extension LockEngine {
    /// Finds the locked directory of `user`'s app `appID` again after the
    /// child renamed a folder on the way to it (its own `Applications`
    /// folder, say), and saves the new path.
    ///
    /// The directory is known by device and inode. It is looked for at its
    /// recorded path, then under each of `candidates`, then under the nearest
    /// ancestor of the recorded path that still exists, then under the user's
    /// home; each search goes at most ``DirectorySearch/depthLimit`` levels
    /// deep without following links.
    /// - Returns: the record with its current path.
    /// - Throws: ``LockError/notLocked(user:appID:)``,
    ///   ``LockError/directoryMissing(user:appID:lastPath:)``; journal errors.
    package func locate(user: String, appID: String, candidates: [String] = []) throws -> LockRecord {
        try serialized(user: user, appID: appID) {
            guard var record = try journal.lockRecord(user: user, appID: appID) else {
                throw LockError.notLocked(user: user, appID: appID)
            }
            _ = try openRecorded(&record, candidates: candidates)
            return record
        }
    }

    /// The lock record of `user`'s app `appID`, with its path refreshed if the
    /// directory moved, or nil when there is none. A directory that cannot be
    /// found keeps its last known path.
    package func status(user: String, appID: String, candidates: [String] = []) throws -> LockRecord? {
        try serialized(user: user, appID: appID) {
            guard var record = try journal.lockRecord(user: user, appID: appID) else { return nil }
            guard record.state != .unlocked else { return record }
            do {
                _ = try openRecorded(&record, candidates: candidates)
            } catch LockError.directoryMissing {
                logger.warning("the locked directory of \(Self.name(record)) is missing from '\(record.path)'")
            }
            return record
        }
    }

    /// Opens the record's directory, verified by device and inode, finding it
    /// again (and saving its new path) if it moved.
    func openRecorded(_ record: inout LockRecord, candidates: [String]) throws -> WalkDirectory {
        if let root = try? AppDirectory.open(record.path), Self.isRecorded(root, record) { return root }
        for searchRoot in searchRoots(record, candidates: candidates) {
            guard let path = DirectorySearch.find(device: record.device, inode: record.inode, under: searchRoot),
                  let root = try? AppDirectory.open(path), Self.isRecorded(root, record)
            else { continue }
            logger.notice("the locked directory of \(Self.name(record)) moved from '\(record.path)' to '\(path)'")
            record.path = path
            try journal.saveLockRecord(record)
            return root
        }
        throw LockError.directoryMissing(user: record.user, appID: record.appID, lastPath: record.path)
    }

    private static func isRecorded(_ root: WalkDirectory, _ record: LockRecord) -> Bool {
        root.status.device == record.device && root.status.inode == record.inode
    }

    private func searchRoots(_ record: LockRecord, candidates: [String]) -> [String] {
        var roots = candidates.compactMap { try? AppDirectory.normalized($0) }
        // Renaming a folder on the way leaves the levels above it in place.
        var ancestor = AppDirectory.parent(of: record.path)
        while ancestor != "/" {
            if (try? AppDirectory.open(ancestor)) != nil {
                roots.append(ancestor)
                break
            }
            ancestor = AppDirectory.parent(of: ancestor)
        }
        if let home = (try? UserDatabase.user(named: record.user))?.home, home.count > 1 {
            roots.append(home)
        }
        var seen = Set<String>()
        return roots.filter { seen.insert($0).inserted }
    }
}
