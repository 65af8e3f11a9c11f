import SystemKit
import SQLite

extension Store {
    /// The time limits apps set, every child's or only `user`'s, by user then app ID.
    /// - Throws: ``StoreError``; ``StoreError/invalidValue(path:table:column:value:)`` for a damaged row.
    package func timeLimits(user: String? = nil) throws(StoreError) -> [TimeLimitsRecord] {
        try withConnection { (connection) throws(StoreError) in
            if let user {
                try connection.query("SELECT \(timeLimitsColumns) FROM time_limits WHERE user = ?1 ORDER BY app_id",
                                     [.text(user)], row: connection.timeLimitsRecord)
            } else {
                try connection.query("SELECT \(timeLimitsColumns) FROM time_limits ORDER BY user, app_id",
                                     row: connection.timeLimitsRecord)
            }
        }
    }

    /// Records `record` (replacing the app's earlier limits for the child)
    /// and appends `event`, in one transaction. Durable when it returns.
    package func saveTimeLimits(_ record: TimeLimitsRecord, audit event: AuditEvent) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                _ = try connection.execute(
                    """
                    INSERT INTO time_limits (\(timeLimitsColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                    ON CONFLICT (user, app_id) DO UPDATE SET
                        uid = excluded.uid, hours = excluded.hours, daily_seconds = excluded.daily_seconds,
                        at_end = excluded.at_end, set_by = excluded.set_by, set_at = excluded.set_at
                    """,
                    [.text(record.user), .integer(Int64(record.uid)), .text(record.appID), .text(orNull: record.hours),
                     record.dailySeconds.map { .integer(Int64($0)) } ?? .null, .text(record.atEnd), .text(record.setBy),
                     .real(record.setAt.seconds)])
                _ = try connection.insert(event)
            }
        }
    }

    /// Removes the limits `appID` set for `user` (every app's when `appID`
    /// is nil) and appends `event` when there were any, in one transaction.
    /// - Returns: whether there were any.
    @discardableResult
    package func deleteTimeLimits(user: String, appID: String?, audit event: AuditEvent?) throws(StoreError) -> Bool {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                let removed = if let appID {
                    try connection.execute("DELETE FROM time_limits WHERE user = ?1 AND app_id = ?2",
                                           [.text(user), .text(appID)])
                } else {
                    try connection.execute("DELETE FROM time_limits WHERE user = ?1", [.text(user)])
                }
                if removed > 0, let event { _ = try connection.insert(event) }
                return removed > 0
            }
        }
    }

    /// Records more time given to a child and appends `event`, in one transaction.
    package func grantMoreTime(_ grant: MoreTimeGrant, audit event: AuditEvent) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                _ = try connection.execute(
                    """
                    INSERT INTO more_time (user, uid, day, seconds, open_until, granted_by, granted_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                    """,
                    [.text(grant.user), .integer(Int64(grant.uid)), .text(grant.day), .integer(Int64(grant.seconds)),
                     .real(grant.openUntil), .text(grant.grantedBy), .real(grant.grantedAt.seconds)])
                _ = try connection.insert(event)
            }
        }
    }

    /// The more time given to `uid` for `day`, all grants together, and the
    /// latest moment a grant lets them log in outside their hours (0 for none).
    package func moreTime(uid: UInt32, day: String) throws(StoreError) -> (seconds: Int, openUntil: Double) {
        try withConnection { (connection) throws(StoreError) in
            try connection.query(
                "SELECT coalesce(sum(seconds), 0), coalesce(max(open_until), 0) FROM more_time WHERE uid = ?1 AND day = ?2",
                [.integer(Int64(uid)), .text(day)]
            ) { row in (Int(row.int64(at: 0)), row.double(at: 1)) }.first ?? (0, 0)
        }
    }

    /// Forgets the more time of days before `day` (kept for nothing once the day is over),
    /// and every grant of `user` when given.
    package func pruneMoreTime(before day: String? = nil, user: String? = nil) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            if let day { _ = try connection.execute("DELETE FROM more_time WHERE day < ?1", [.text(day)]) }
            if let user { _ = try connection.execute("DELETE FROM more_time WHERE user = ?1", [.text(user)]) }
        }
    }
}

private let timeLimitsColumns = "user, uid, app_id, hours, daily_seconds, at_end, set_by, set_at"

extension StoreConnection {
    /// Reads a row selected with `timeLimitsColumns`.
    fileprivate func timeLimitsRecord(_ row: SQLiteStatement) throws(StoreError) -> TimeLimitsRecord {
        let table = "time_limits"
        let atEnd = try text(row, 5, table: table, name: "at_end")
        guard atEnd == "lock" || atEnd == "end" else {
            throw .invalidValue(path: path, table: table, column: "at_end", value: atEnd)
        }
        let daily: Int? = row.isNull(at: 4) ? nil : try integer(row, 4, table: table, name: "daily_seconds", as: Int.self)
        return TimeLimitsRecord(
            user: try text(row, 0, table: table, name: "user"), uid: try integer(row, 1, table: table, name: "uid"),
            appID: try text(row, 2, table: table, name: "app_id"), hours: row.string(at: 3), dailySeconds: daily,
            atEnd: atEnd, setBy: try text(row, 6, table: table, name: "set_by"),
            setAt: UnixTime(seconds: row.double(at: 7)))
    }
}
