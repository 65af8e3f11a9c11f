import FamilyControlsModel
import SQLite
import SystemKit
import GuardIdentity

extension Store {
    /// Appends `event` to the audit trail. Durable when it returns.
    ///
    /// With `window`, the same event again (same actor, action, user, app,
    /// member, outcome and detail) among the user's latest `candidates`
    /// rows, first seen at most `window` seconds
    /// before, is counted on that row (its ``AuditEvent/count`` and
    /// ``AuditEvent/lastAt``) instead of adding one.
    /// - Returns: the id of the row added or counted on (``AuditEvent/id`` is ignored).
    /// - Throws: ``StoreError/sqlite(path:_:)`` with `SQLITE_CONSTRAINT_CHECK`
    ///   when the actor, action or outcome is empty.
    @discardableResult
    package func appendAudit(_ event: AuditEvent, coalescingWithin window: Double? = nil,
                             amongLatest candidates: Int = GuardLimits().auditRepeatCandidates) throws(StoreError) -> Int64 {
        try withConnection { (connection) throws(StoreError) in
            guard let window else { return try connection.insert(event) }
            return try connection.transaction { () throws(StoreError) -> Int64 in
                if let id = try connection.repeated(event, since: event.atSeconds - window, amongLatest: candidates) {
                    try connection.execute("UPDATE audit SET times = times + 1, last_at = max(coalesce(last_at, at), ?2) WHERE id = ?1",
                                           [.integer(id), .real(event.atSeconds)])
                    return id
                }
                return try connection.insert(event)
            }
        }
    }

    /// The latest `limit` audit events, oldest first: all, or only those
    /// about `user`, about `appID`, at or after `since` (Unix seconds),
    /// appended before the event numbered `beforeID` (to read on from there).
    ///
    /// Order is the order events were appended, which a clock change cannot upset.
    package func auditEvents(user: String? = nil, appID: String? = nil, since: Double? = nil,
                             beforeID: Int64? = nil, limit: Int = 1000) throws(StoreError) -> [AuditEvent] {
        var conditions: [String] = []
        var values: [SQLiteValue] = [.integer(Int64(max(0, limit)))]
        if let user {
            values.append(.text(user))
            conditions.append("user = ?\(values.count)")
        }
        if let appID {
            values.append(.text(appID))
            conditions.append("app_id = ?\(values.count)")
        }
        if let since {
            // A row counts repeats: it is as recent as its last one.
            values.append(.real(since))
            conditions.append("coalesce(last_at, at) >= ?\(values.count)")
        }
        if let beforeID {
            values.append(.integer(beforeID))
            conditions.append("id < ?\(values.count)")
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        // The inner query picks the newest `limit`; the outer puts them in order.
        let sql = """
            SELECT * FROM (
                SELECT \(auditColumns) FROM audit \(filter) ORDER BY id DESC LIMIT ?1
            ) ORDER BY id
            """
        return try withConnection { (connection) throws(StoreError) in
            try connection.query(sql, values, row: connection.auditEvent)
        }
    }

    /// Deletes the audit events from before `cutoff` (Unix seconds).
    /// - Returns: how many were deleted.
    @discardableResult
    package func pruneAudit(before cutoff: Double) throws(StoreError) -> Int {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute("DELETE FROM audit WHERE coalesce(last_at, at) < ?1", [.real(cutoff)])
            return connection.changes
        }
    }
}

private let auditColumns = "id, at, actor, action, user, app_id, member, outcome, detail, times, last_at"

extension StoreConnection {
    /// Inserts `event`, inside the caller's transaction if there is one.
    /// - Returns: the new row's id.
    func insert(_ event: AuditEvent) throws(StoreError) -> Int64 {
        try execute(
            """
            INSERT INTO audit (at, actor, action, user, app_id, member, outcome, detail)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """,
            [
                .real(event.atSeconds), .text(event.actor), .text(event.action.rawValue), .text(event.user),
                .text(orNull: event.appID), .text(orNull: event.member?.description),
                .text(event.outcome.rawValue), .text(orNull: event.detail),
            ]
        )
        return lastInsertRowID
    }

    /// The row `event` repeats: the newest among its user's latest
    /// `candidates` with every field the same, first seen at or after `since`.
    func repeated(_ event: AuditEvent, since: Double, amongLatest candidates: Int) throws(StoreError) -> Int64? {
        try query(
            """
            SELECT id FROM (
                SELECT id, at, actor, action, app_id, member, outcome, detail FROM audit
                WHERE user = ?1 ORDER BY id DESC LIMIT ?9
            )
            WHERE actor = ?2 AND action = ?3 AND app_id IS ?4 AND member IS ?5 AND outcome = ?6
                AND detail IS ?7 AND at >= ?8
            ORDER BY id DESC LIMIT 1
            """,
            [
                .text(event.user), .text(event.actor), .text(event.action.rawValue), .text(orNull: event.appID),
                .text(orNull: event.member?.description), .text(event.outcome.rawValue), .text(orNull: event.detail),
                .real(since), .integer(Int64(candidates)),
            ],
            row: { $0.int64(at: 0) }
        ).first
    }

    /// Reads a row selected with `auditColumns`.
    fileprivate func auditEvent(_ row: SQLiteStatement) throws(StoreError) -> AuditEvent {
        let table = "audit"
        let member: FamilyControlsMember? = row.isNull(at: 6)
            ? nil : try decode(row, 6, table: table, name: "member", FamilyControlsMember.init(name:))
        var event = AuditEvent(
            id: row.int64(at: 0),
            at: UnixTime(seconds: 0),
            actor: try text(row, 2, table: table, name: "actor"),
            action: AuditAction(rawValue: try text(row, 3, table: table, name: "action")),
            user: try text(row, 4, table: table, name: "user"),
            appID: row.string(at: 5),
            member: member,
            outcome: AuditOutcome(rawValue: try text(row, 7, table: table, name: "outcome")),
            detail: row.string(at: 8),
            count: try integer(row, 9, table: table, name: "times"),
            lastAt: row.isNull(at: 10) ? nil : UnixTime(seconds: row.double(at: 10))
        )
        event.atSeconds = row.double(at: 1)
        return event
    }
}
