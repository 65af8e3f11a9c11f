import LockEngine
import SQLite

extension Store {
    /// Records an update swapped in, in one transaction, once the two
    /// folders have exchanged names: the lock recorded for `appID` becomes
    /// the staged version's (its entries, its device and inode, at
    /// `appPath`), the lock recorded under `stagedKey` becomes the old
    /// version's (at `stagedPath`, to be released), and the approval
    /// follows the new folder (`authorization`, with its identity).
    /// Durable when it returns; before it, a restart finds the old records
    /// and the names swapped, and finishes the same way.
    /// - Throws: ``StoreError``; ``StoreError/invalidValue(path:table:column:value:)``
    ///   when either lock is not recorded.
    package func recordUpdateSwapped(user: String, appID: String, stagedKey: String, appPath: String, stagedPath: String,
                                     authorization: AuthorizationRecord, audit event: AuditEvent) throws(StoreError) {
        guard let old = try lockRecord(user: user, appID: appID), let new = try lockRecord(user: user, appID: stagedKey) else {
            throw .invalidValue(path: path, table: "locks", column: "app_id", value: "\(appID) or \(stagedKey) of \(user): no lock recorded")
        }
        var installed = new
        installed.appID = appID
        installed.path = appPath
        var released = old
        released.appID = stagedKey
        released.path = stagedPath
        // The entries change owners by key, in three moves through a parking
        // key that no app ID nor staged key can be (it starts with an empty
        // part); never decoded and written again, so a 50,000-file app's
        // entries move in a few row updates.
        var parked = old
        parked.appID = "..swap"
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.upsert(parked)
                for (from, to) in [(appID, parked.appID), (stagedKey, appID), (parked.appID, stagedKey)] {
                    for table in ["lock_entries", "lock_entry_chunks"] {
                        try connection.execute("UPDATE \(table) SET app_id = ?3 WHERE user = ?1 AND app_id = ?2",
                                               [.text(user), .text(from), .text(to)])
                    }
                }
                try connection.upsert(installed)
                try connection.upsert(released)
                try connection.execute("DELETE FROM locks WHERE user = ?1 AND app_id = ?2", [.text(user), .text(parked.appID)])
                try connection.upsert(authorization)
                _ = try connection.insert(event)
            }
        }
    }
}
