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
        let oldEntries = try entries(user: user, appID: appID)
        let newEntries = try entries(user: user, appID: stagedKey)
        var installed = new
        installed.appID = appID
        installed.path = appPath
        var released = old
        released.appID = stagedKey
        released.path = stagedPath
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                for (record, entries) in [(installed, newEntries), (released, oldEntries)] {
                    try connection.upsert(record)
                    for table in ["lock_entries", "lock_entry_chunks"] {
                        try connection.execute("DELETE FROM \(table) WHERE user = ?1 AND app_id = ?2",
                                               [.text(record.user), .text(record.appID)])
                    }
                    try connection.insertChunks(entries, user: record.user, appID: record.appID, from: 0)
                }
                try connection.upsert(authorization)
                _ = try connection.insert(event)
            }
        }
    }
}
