import FamilyControlsModel
import SystemKit
import LockEngine
import SQLite
import UpdateSignature
import GuardIdentity

extension Store {
    /// The authorization of `appID` for `user`, or nil when none is recorded.
    package func authorization(user: String, appID: String) throws(StoreError) -> AuthorizationRecord? {
        try withConnection { (connection) throws(StoreError) in
            try connection.query(
                "SELECT \(authorizationColumns) FROM authorizations WHERE user = ?1 AND app_id = ?2",
                [.text(user), .text(appID)], row: connection.authorizationRecord
            ).first
        }
    }

    /// Every recorded authorization, or only `user`'s, sorted by user then app ID.
    package func authorizations(user: String? = nil) throws(StoreError) -> [AuthorizationRecord] {
        try withConnection { (connection) throws(StoreError) in
            if let user {
                try connection.query(
                    "SELECT \(authorizationColumns) FROM authorizations WHERE user = ?1 ORDER BY app_id",
                    [.text(user)], row: connection.authorizationRecord)
            } else {
                try connection.query(
                    "SELECT \(authorizationColumns) FROM authorizations ORDER BY user, app_id",
                    row: connection.authorizationRecord)
            }
        }
    }

    /// Inserts `record`, or replaces the one recorded for its user and app ID.
    /// Durable when it returns.
    package func save(_ record: AuthorizationRecord) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.upsert(record)
        }
    }

    /// Saves `record` and appends `event` in one transaction: both are
    /// recorded, or, if either fails, neither is. Durable when it returns.
    /// - Returns: the audit event's ``AuditEvent/id``.
    @discardableResult
    package func save(_ record: AuthorizationRecord, audit event: AuditEvent) throws(StoreError) -> Int64 {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.upsert(record)
                return try connection.insert(event)
            }
        }
    }

    /// Saves a denial and appends `event` in one transaction, then forgets
    /// the user's oldest denials beyond `keeping`: a child with many app
    /// folders cannot grow the store without end by refusing each.
    /// - Returns: the app IDs whose denial was forgotten (back to not determined).
    @discardableResult
    package func saveDenial(_ record: AuthorizationRecord, audit event: AuditEvent, keeping: Int) throws(StoreError) -> [String] {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.upsert(record)
                _ = try connection.insert(event)
                let forgotten = try connection.query(
                    """
                    SELECT app_id FROM authorizations WHERE user = ?1 AND status = 'denied'
                    ORDER BY updated_at DESC, app_id LIMIT -1 OFFSET ?2
                    """,
                    [.text(record.user), .integer(Int64(keeping))]) { row in row.string(at: 0) ?? "" }
                for appID in forgotten {
                    try connection.execute(
                        "DELETE FROM authorizations WHERE user = ?1 AND app_id = ?2 AND status = 'denied'",
                        [.text(record.user), .text(appID)])
                }
                return forgotten
            }
        }
    }

    /// Removes the authorization of `appID` for `user`.
    /// - Returns: whether there was one to remove.
    @discardableResult
    package func deleteAuthorization(user: String, appID: String) throws(StoreError) -> Bool {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute(
                "DELETE FROM authorizations WHERE user = ?1 AND app_id = ?2", [.text(user), .text(appID)]
            ) > 0
        }
    }

    /// Removes the authorization of `appID` for `user` and appends `event`, in
    /// one transaction: both happen, or neither does. Durable when it returns.
    /// - Returns: whether there was an authorization to remove (the event is appended either way).
    @discardableResult
    package func deleteAuthorization(user: String, appID: String, audit event: AuditEvent) throws(StoreError) -> Bool {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                let removed = try connection.execute(
                    "DELETE FROM authorizations WHERE user = ?1 AND app_id = ?2", [.text(user), .text(appID)]
                ) > 0
                _ = try connection.insert(event)
                return removed
            }
        }
    }
}

private let authorizationColumns = "user, uid, app_id, member, status, approved_by, updated_at, app_path, app_device, app_inode, flatpak_installation, flatpak_deployment, flatpak_remote, flatpak_url, flatpak_commit_time, update_key, update_version, flatpak_runtime, flatpak_runtime_commit, flatpak_runtime_time, app_name"

extension StoreConnection {
    func upsert(_ record: AuthorizationRecord) throws(StoreError) {
        // ON CONFLICT DO UPDATE rather than INSERT OR REPLACE: REPLACE deletes
        // the old row first, which would fire deletes on anything referencing it.
        try execute(
            """
            INSERT INTO authorizations (\(authorizationColumns))
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)
            ON CONFLICT (user, app_id) DO UPDATE SET
                uid = excluded.uid, member = excluded.member, status = excluded.status,
                approved_by = excluded.approved_by, updated_at = excluded.updated_at,
                app_path = excluded.app_path, app_device = excluded.app_device, app_inode = excluded.app_inode,
                flatpak_installation = excluded.flatpak_installation, flatpak_deployment = excluded.flatpak_deployment,
                flatpak_remote = excluded.flatpak_remote, flatpak_url = excluded.flatpak_url,
                flatpak_commit_time = excluded.flatpak_commit_time,
                update_key = excluded.update_key, update_version = excluded.update_version,
                flatpak_runtime = excluded.flatpak_runtime, flatpak_runtime_commit = excluded.flatpak_runtime_commit,
                flatpak_runtime_time = excluded.flatpak_runtime_time, app_name = excluded.app_name
            """,
            [
                .text(record.user), .integer(Int64(record.uid)), .text(record.appID),
                .text(record.member.description), .text(record.status.description),
                .text(orNull: record.approvedBy), .real(record.updatedAtSeconds), .text(record.appPath),
                record.appIdentity.map { .integer(Int64(bitPattern: $0.device)) } ?? .null,
                record.appIdentity.map { .integer(Int64(bitPattern: $0.inode)) } ?? .null,
                .text(orNull: record.flatpak.map { $0.installation.kind == .system ? "system" : "user" }),
                .text(orNull: record.flatpak?.path),
                .text(orNull: record.flatpakOrigin?.remote), .text(orNull: record.flatpakOrigin?.url),
                record.flatpakOrigin.map { .integer(Int64(clamping: $0.commitTime)) } ?? .null,
                .text(orNull: record.updateKey?.declaration), .text(orNull: record.highestVersion),
                .text(orNull: record.flatpakOrigin?.runtime?.name), .text(orNull: record.flatpakOrigin?.runtime?.commit),
                record.flatpakOrigin?.runtime.map { .integer(Int64(clamping: $0.timestamp)) } ?? .null,
                .text(orNull: record.displayName),
            ]
        )
    }

    /// Reads a row selected with `authorizationColumns`.
    fileprivate func authorizationRecord(_ row: SQLiteStatement) throws(StoreError) -> AuthorizationRecord {
        let table = "authorizations"
        var record = AuthorizationRecord(
            user: try text(row, 0, table: table, name: "user"),
            uid: try integer(row, 1, table: table, name: "uid"),
            appID: try text(row, 2, table: table, name: "app_id"),
            member: try decode(row, 3, table: table, name: "member", FamilyControlsMember.init(name:)),
            status: try decode(row, 4, table: table, name: "status", AuthorizationStatus.init(name:)),
            approvedBy: row.string(at: 5),
            updatedAt: UnixTime(seconds: 0),
            appPath: try text(row, 7, table: table, name: "app_path")
        )
        record.updatedAtSeconds = row.double(at: 6)
        if !row.isNull(at: 8), !row.isNull(at: 9) {
            record.appIdentity = FileIdentity(device: UInt64(bitPattern: row.int64(at: 8)),
                                              inode: UInt64(bitPattern: row.int64(at: 9)))
        }
        if let kind = row.string(at: 10) {
            guard let path = row.string(at: 11),
                  let deployment = FlatpakDeployment(recordedAt: path, system: kind == "system", uid: record.uid) else {
                throw .invalidValue(path: path, table: table, column: "flatpak_deployment", value: row.string(at: 11) ?? "NULL")
            }
            record.flatpak = deployment
        }
        if let remote = row.string(at: 12), let url = row.string(at: 13), !row.isNull(at: 14) {
            let time = row.int64(at: 14)
            guard time >= 0 else {
                throw .invalidValue(path: path, table: table, column: "flatpak_commit_time", value: String(time))
            }
            record.flatpakOrigin = FlatpakOrigin(remote: remote, url: url, commitTime: UInt64(time))
            if let name = row.string(at: 17), let commit = row.string(at: 18), !row.isNull(at: 19) {
                let pin = FlatpakRuntimePin(name: name, commit: commit, timestamp: UInt64(clamping: row.int64(at: 19)))
                guard pin.parts != nil, OstreeCommit.isChecksum(commit), row.int64(at: 19) >= 0 else {
                    throw .invalidValue(path: path, table: table, column: "flatpak_runtime", value: "\(name) \(commit)")
                }
                record.flatpakOrigin?.runtime = pin
            }
        }
        if let declaration = row.string(at: 15) {
            // A key that does not parse trusts nothing: refused, never read as "no key" silently.
            guard let key = try? UpdateKey(declaration: declaration) else {
                throw .invalidValue(path: path, table: table, column: "update_key", value: declaration)
            }
            record.updateKey = key
        }
        record.highestVersion = row.string(at: 16)
        record.displayName = row.string(at: 20)
        return record
    }
}
