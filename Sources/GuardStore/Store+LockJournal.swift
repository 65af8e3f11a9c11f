import LockEngine
import SQLite

extension Store: LockJournal {
    /// The lock record of (user, app), or nil when none is recorded.
    package func lockRecord(user: String, appID: String) throws(StoreError) -> LockRecord? {
        try withConnection { (connection) throws(StoreError) in
            try connection.query(
                "SELECT \(lockColumns) FROM locks WHERE user = ?1 AND app_id = ?2",
                [.text(user), .text(appID)], row: connection.lockRecord
            ).first
        }
    }

    /// Every lock record, sorted by user then app ID.
    package func allLockRecords() throws(StoreError) -> [LockRecord] {
        try withConnection { (connection) throws(StoreError) in
            try connection.query("SELECT \(lockColumns) FROM locks ORDER BY user, app_id", row: connection.lockRecord)
        }
    }

    /// Inserts or updates the record for (`record.user`, `record.appID`),
    /// keeping its entries. Durable when it returns.
    package func saveLockRecord(_ record: LockRecord) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.upsert(record)
        }
    }

    /// Saves `record` and replaces all of its entries with `entries`, in one
    /// transaction. Durable when it returns.
    /// - Throws: ``StoreError/invalidValue(path:table:column:value:)`` when two
    ///   entries share a path (nothing is written then).
    package func saveEntries(_ entries: [LockedEntry], record: LockRecord) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            var paths = Set<String>()
            for entry in entries where !paths.insert(entry.relativePath).inserted {
                throw .invalidValue(path: connection.path, table: "lock_entry_chunks", column: "relative_path",
                                    value: "\(entry.relativePath.clipped) (twice)")
            }
            try connection.transaction { () throws(StoreError) in
                try connection.upsert(record)
                for table in ["lock_entries", "lock_entry_chunks"] {
                    try connection.execute("DELETE FROM \(table) WHERE user = ?1 AND app_id = ?2",
                                           [.text(record.user), .text(record.appID)])
                }
                try connection.insertChunks(entries, user: record.user, appID: record.appID, from: 0)
            }
        }
    }

    /// Saves `record` and adds `entries`, which replace entries at the same
    /// paths when read, in one transaction. Durable when it returns.
    package func appendEntries(_ entries: [LockedEntry], record: LockRecord) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.upsert(record)
                let next = try connection.query(
                    "SELECT coalesce(max(seq), -1) + 1 FROM lock_entry_chunks WHERE user = ?1 AND app_id = ?2",
                    [.text(record.user), .text(record.appID)]) { $0.int64(at: 0) }.first ?? 0
                try connection.insertChunks(entries, user: record.user, appID: record.appID, from: next)
            }
        }
    }

    /// The entries recorded for (user, app), in the order they were saved; an
    /// entry added later at a path already recorded takes that one's place.
    package func entries(user: String, appID: String) throws(StoreError) -> [LockedEntry] {
        try withConnection { (connection) throws(StoreError) in
            var entries = try connection.query(
                """
                SELECT relative_path, kind, device, inode, uid, gid, mode, was_immutable
                FROM lock_entries WHERE user = ?1 AND app_id = ?2 ORDER BY rowid
                """,
                [.text(user), .text(appID)], row: connection.lockedEntry)
            var index = entries.positionsByPath()
            let chunks = try connection.query(
                "SELECT seq, entries FROM lock_entry_chunks WHERE user = ?1 AND app_id = ?2 ORDER BY seq",
                [.text(user), .text(appID)]) { row in (row.int64(at: 0), row.bytes(at: 1) ?? []) }
            for (seq, blob) in chunks {
                let decoded: [LockedEntry]
                do throws(LockEntryCodec.CodecError) {
                    decoded = try LockEntryCodec.decode(blob)
                } catch {
                    throw .invalidValue(path: connection.path, table: "lock_entry_chunks", column: "entries",
                                        value: "chunk \(seq) of \(appID) for \(user): \(error)")
                }
                for entry in decoded {
                    if let position = index[entry.relativePath] {
                        entries[position] = entry
                    } else {
                        index[entry.relativePath] = entries.count
                        entries.append(entry)
                    }
                }
            }
            return entries
        }
    }

    /// Removes the record and, by cascade, its entries. Durable when it returns.
    package func deleteLock(user: String, appID: String) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) -> Void in
            try connection.execute("DELETE FROM locks WHERE user = ?1 AND app_id = ?2", [.text(user), .text(appID)])
        }
    }
}

private let lockColumns = "user, app_id, path, device, inode, state, reason"

extension StoreConnection {
    func upsert(_ record: LockRecord) throws(StoreError) {
        let (state, reason) = record.state.columns
        // ON CONFLICT DO UPDATE, not INSERT OR REPLACE: REPLACE deletes the old
        // row first, and the cascade would take every entry with it.
        try execute(
            """
            INSERT INTO locks (\(lockColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT (user, app_id) DO UPDATE SET
                path = excluded.path, device = excluded.device, inode = excluded.inode,
                state = excluded.state, reason = excluded.reason
            """,
            [
                .text(record.user), .text(record.appID), .text(record.path),
                .integer(Int64(bitPattern: record.device)), .integer(Int64(bitPattern: record.inode)),
                .text(state), .text(orNull: reason),
            ]
        )
    }

    /// Writes `entries` as blobs of up to ``LockEntryCodec/entriesPerChunk``,
    /// numbered from `first`.
    func insertChunks(_ entries: [LockedEntry], user: String, appID: String, from first: Int64) throws(StoreError) {
        var seq = first
        var start = entries.startIndex
        while start < entries.endIndex {
            let end = min(start + LockEntryCodec.entriesPerChunk, entries.endIndex)
            try execute(
                "INSERT INTO lock_entry_chunks (user, app_id, seq, entries) VALUES (?1, ?2, ?3, ?4)",
                [.text(user), .text(appID), .integer(seq), .blob(LockEntryCodec.encode(entries[start..<end]))])
            seq += 1
            start = end
        }
    }

    /// Reads a row selected with `lockColumns`.
    fileprivate func lockRecord(_ row: SQLiteStatement) throws(StoreError) -> LockRecord {
        let table = "locks"
        let stateName = try text(row, 5, table: table, name: "state")
        guard let state = LockState(name: stateName, reason: row.string(at: 6)) else {
            throw .invalidValue(path: path, table: table, column: "state", value: stateName)
        }
        return LockRecord(
            user: try text(row, 0, table: table, name: "user"),
            appID: try text(row, 1, table: table, name: "app_id"),
            path: try text(row, 2, table: table, name: "path"),
            device: UInt64(bitPattern: row.int64(at: 3)),
            inode: UInt64(bitPattern: row.int64(at: 4)),
            state: state
        )
    }

    fileprivate func lockedEntry(_ row: SQLiteStatement) throws(StoreError) -> LockedEntry {
        let table = "lock_entries"
        return LockedEntry(
            relativePath: try text(row, 0, table: table, name: "relative_path"),
            kind: try decode(row, 1, table: table, name: "kind", LockedEntry.Kind.init(name:)),
            device: UInt64(bitPattern: row.int64(at: 2)),
            inode: UInt64(bitPattern: row.int64(at: 3)),
            uid: try integer(row, 4, table: table, name: "uid"),
            gid: try integer(row, 5, table: table, name: "gid"),
            mode: try integer(row, 6, table: table, name: "mode"),
            wasImmutable: row.int64(at: 7) != 0
        )
    }
}

// Device and inode numbers are unsigned 64-bit and SQLite integers are signed:
// they are stored as the same bits, so none is lost.

extension LockState {
    /// The `state` and `reason` columns.
    fileprivate var columns: (state: String, reason: String?) {
        switch self {
        case .unlocked: ("unlocked", nil)
        case .locking: ("locking", nil)
        case .locked: ("locked", nil)
        case .unlocking: ("unlocking", nil)
        case .unenforced(let reason): ("unenforced", reason)
        }
    }

    fileprivate init?(name: String, reason: String?) {
        switch (name, reason) {
        case ("unlocked", nil): self = .unlocked
        case ("locking", nil): self = .locking
        case ("locked", nil): self = .locked
        case ("unlocking", nil): self = .unlocking
        case ("unenforced", let reason?): self = .unenforced(reason: reason)
        default: return nil
        }
    }
}

extension LockedEntry.Kind {
    /// The `kind` column: a word, so an administrator reading the table understands it.
    fileprivate var name: String {
        switch self {
        case .directory: "directory"
        case .regular: "regular"
        case .symlink: "symlink"
        case .other: "other"
        }
    }

    fileprivate init?(name: String) {
        switch name {
        case "directory": self = .directory
        case "regular": self = .regular
        case "symlink": self = .symlink
        case "other": self = .other
        default: return nil
        }
    }
}
