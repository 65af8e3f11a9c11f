import SystemKit
import FamilyConfiguration
import SQLite

/// The store's tables, as an ordered list of migrations, and the code that applies them.
///
/// `PRAGMA user_version` records how many migrations a store has run;
/// `PRAGMA application_id` marks the file as a Family Controls store.
package enum StoreSchema {
    /// `PRAGMA application_id` of every Family Controls store ("FamC").
    package static let applicationID: Int32 = 0x4661_6D43

    /// Every migration, oldest first; the last one's version is the current schema.
    package static let migrations: [StoreMigration] = [version1, version2, version3, version4, version5, version6, version7, version8, version9,
                                                             version10, version11, version12, version13]

    /// The schema version this code writes and reads.
    package static var currentVersion: Int { migrations.last?.version ?? 0 }
    /// The first version with the `time_limits` table.
    package static let timeLimitsVersion = 13

    // STRICT tables reject a value of the wrong type instead of storing it;
    // CHECKs keep the enumerations readable by the code that decodes them.
    private static let version1 = StoreMigration(
        version: 1,
        summary: "authorizations, audit trail, and lock journal",
        sql: """
            PRAGMA application_id = \(applicationID);

            CREATE TABLE authorizations (
                user TEXT NOT NULL CHECK (user <> ''),
                app_id TEXT NOT NULL CHECK (app_id <> ''),
                uid INTEGER NOT NULL CHECK (uid BETWEEN 0 AND 4294967295),
                member TEXT NOT NULL CHECK (member IN ('child', 'individual')),
                status TEXT NOT NULL CHECK (status IN ('notDetermined', 'denied', 'approved')),
                approved_by TEXT,
                updated_at REAL NOT NULL,
                app_path TEXT NOT NULL,
                PRIMARY KEY (user, app_id)
            ) STRICT;

            CREATE TABLE audit (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                at REAL NOT NULL,
                actor TEXT NOT NULL CHECK (actor <> ''),
                action TEXT NOT NULL CHECK (action <> ''),
                user TEXT NOT NULL,
                app_id TEXT,
                member TEXT CHECK (member IS NULL OR member IN ('child', 'individual')),
                outcome TEXT NOT NULL CHECK (outcome <> ''),
                detail TEXT
            ) STRICT;
            CREATE INDEX audit_by_user ON audit (user, id);

            CREATE TABLE locks (
                user TEXT NOT NULL,
                app_id TEXT NOT NULL,
                path TEXT NOT NULL,
                device INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                state TEXT NOT NULL
                    CHECK (state IN ('unlocked', 'locking', 'locked', 'unlocking', 'unenforced')),
                reason TEXT,
                CHECK ((state = 'unenforced') = (reason IS NOT NULL)),
                PRIMARY KEY (user, app_id)
            ) STRICT;

            CREATE TABLE lock_entries (
                user TEXT NOT NULL,
                app_id TEXT NOT NULL,
                relative_path TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('directory', 'regular', 'symlink', 'other')),
                device INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                uid INTEGER NOT NULL CHECK (uid BETWEEN 0 AND 4294967295),
                gid INTEGER NOT NULL CHECK (gid BETWEEN 0 AND 4294967295),
                mode INTEGER NOT NULL CHECK (mode BETWEEN 0 AND 4095),
                was_immutable INTEGER NOT NULL CHECK (was_immutable IN (0, 1)),
                PRIMARY KEY (user, app_id, relative_path),
                FOREIGN KEY (user, app_id) REFERENCES locks (user, app_id) ON DELETE CASCADE
            ) STRICT;
            """
    )

    // An approval binds the directory that was identified, not its path:
    // existing approvals take the device and inode of their lock.
    private static let version2 = StoreMigration(
        version: 2,
        summary: "approvals remember which directory (device and inode) was approved",
        sql: """
            ALTER TABLE authorizations ADD COLUMN app_device INTEGER;
            ALTER TABLE authorizations ADD COLUMN app_inode INTEGER;
            UPDATE authorizations SET
                app_device = (SELECT device FROM locks
                              WHERE locks.user = authorizations.user AND locks.app_id = authorizations.app_id),
                app_inode = (SELECT inode FROM locks
                             WHERE locks.user = authorizations.user AND locks.app_id = authorizations.app_id);
            CREATE INDEX authorizations_by_status ON authorizations (user, status, updated_at);
            """
    )

    // The lock journal's entries as blobs of thousands (LockEntryCodec): a lock
    // of ten thousand files is a few row writes, not ten thousand inserts.
    // Rows already in lock_entries stay readable; new entries go here.
    private static let version3 = StoreMigration(
        version: 3,
        summary: "lock journal entries stored in compact chunks",
        sql: """
            CREATE TABLE lock_entry_chunks (
                user TEXT NOT NULL,
                app_id TEXT NOT NULL,
                seq INTEGER NOT NULL CHECK (seq >= 0),
                entries BLOB NOT NULL,
                PRIMARY KEY (user, app_id, seq),
                FOREIGN KEY (user, app_id) REFERENCES locks (user, app_id) ON DELETE CASCADE
            ) STRICT;
            """
    )

    // The same event that changed nothing, again soon after, is counted on
    // its first row (times, last_at) instead of adding a row: a flood of
    // refused calls is one line, as syslog's "last message repeated".
    private static let version4 = StoreMigration(
        version: 4,
        summary: "audit events count their repeats",
        sql: """
            ALTER TABLE audit ADD COLUMN times INTEGER NOT NULL DEFAULT 1 CHECK (times >= 1);
            ALTER TABLE audit ADD COLUMN last_at REAL;
            """
    )

    // Numbers that must never repeat, not even across restarts: the IDs a
    // guardian types in `familyctl approve ID`.
    private static let version5 = StoreMigration(
        version: 5,
        summary: "counters that outlive restarts (request numbers)",
        sql: """
            CREATE TABLE counters (
                name TEXT PRIMARY KEY CHECK (name <> ''),
                value INTEGER NOT NULL CHECK (value >= 0)
            ) STRICT;
            """
    )

    // A Flatpak app's approval names the deployment it was given for: the
    // installation's kind and the deployment's folder, whose last five parts
    // are app/ID/ARCH/BRANCH/COMMIT. Null for an app in an app root.
    private static let version6 = StoreMigration(
        version: 6,
        summary: "approvals of Flatpak apps record the deployment",
        sql: """
            ALTER TABLE authorizations ADD COLUMN flatpak_installation TEXT
                CHECK (flatpak_installation IN ('user', 'system'));
            ALTER TABLE authorizations ADD COLUMN flatpak_deployment TEXT
                CHECK ((flatpak_deployment IS NULL) = (flatpak_installation IS NULL));
            """
    )

    // A Flatpak app moved into the Guard's installation records where it
    // updates from (the remote's name and URL there) and the approved
    // commit's time, which an update must not go back before. Null otherwise.
    private static let version7 = StoreMigration(
        version: 7,
        summary: "approvals of Flatpak apps moved into the Guard's installation record the remote and the commit's time",
        sql: """
            ALTER TABLE authorizations ADD COLUMN flatpak_remote TEXT;
            ALTER TABLE authorizations ADD COLUMN flatpak_url TEXT;
            ALTER TABLE authorizations ADD COLUMN flatpak_commit_time INTEGER
                CHECK ((flatpak_commit_time IS NULL) = (flatpak_remote IS NULL)
                       AND (flatpak_remote IS NULL) = (flatpak_url IS NULL)
                       AND (flatpak_remote IS NULL OR flatpak_deployment IS NOT NULL));
            """
    )

    // A child's approval of an app in an app root records the update key a
    // parent or guardian was shown (the one whose signed versions go in
    // without asking) and the highest version it has had (a signed update
    // must be newer). Approvals made before have neither: every update of
    // theirs is a guardian's decision, as no guardian was shown a key.
    private static let version8 = StoreMigration(
        version: 8,
        summary: "approvals record the update key a guardian was shown and the highest version",
        sql: """
            ALTER TABLE authorizations ADD COLUMN update_key TEXT
                CHECK (update_key IS NULL OR update_key LIKE 'ed25519:%');
            ALTER TABLE authorizations ADD COLUMN update_version TEXT
                CHECK (update_version IS NULL OR length(update_version) BETWEEN 1 AND 64);
            """
    )

    // A Flatpak app moved into the Guard's installation records the runtime
    // it was approved on (ID/ARCH/BRANCH, commit, the commit's time): a new
    // runtime commit is judged as a new app commit is. Approvals made before
    // have none, and record the runtime deployed at their next check.
    private static let version9 = StoreMigration(
        version: 9,
        summary: "approvals of Flatpak apps in the Guard's installation record the runtime",
        sql: """
            ALTER TABLE authorizations ADD COLUMN flatpak_runtime TEXT
                CHECK (flatpak_runtime IS NULL OR (flatpak_remote IS NOT NULL AND length(flatpak_runtime) BETWEEN 5 AND 512));
            ALTER TABLE authorizations ADD COLUMN flatpak_runtime_commit TEXT
                CHECK ((flatpak_runtime_commit IS NULL) = (flatpak_runtime IS NULL)
                       AND (flatpak_runtime_commit IS NULL OR length(flatpak_runtime_commit) = 64));
            ALTER TABLE authorizations ADD COLUMN flatpak_runtime_time INTEGER
                CHECK ((flatpak_runtime_time IS NULL) = (flatpak_runtime IS NULL));
            """
    )

    // The app's name as the alert showed it (`Name=` of its desktop entry,
    // cut and escaped), so that `familyctl status` names the app as the
    // parent saw it asked. Approvals made before have none, and show the app ID.
    private static let version10 = StoreMigration(
        version: 10,
        summary: "authorizations record the app's name as its alert showed it",
        sql: """
            ALTER TABLE authorizations ADD COLUMN app_name TEXT
                CHECK (app_name IS NULL OR length(app_name) BETWEEN 1 AND 400);
            """
    )

    // The login sessions the PAM module told of and the monitors' processes
    // running, kept so that a restarted Guard takes up the sessions still open
    // and ends the monitors it left (text files in the state folder before).
    private static let version11 = StoreMigration(
        version: 11,
        summary: "login sessions and running monitors are kept in the store",
        sql: """
            CREATE TABLE login_sessions (
                token TEXT PRIMARY KEY CHECK (length(token) = 32),
                user TEXT NOT NULL CHECK (user <> ''),
                uid INTEGER NOT NULL CHECK (uid >= 0),
                service TEXT NOT NULL,
                tty TEXT,
                runtime_directory TEXT,
                display TEXT,
                wayland_display TEXT,
                bus TEXT,
                session_id TEXT,
                leader INTEGER NOT NULL CHECK (leader > 1),
                leader_started INTEGER NOT NULL CHECK (leader_started >= 0),
                opened_at REAL NOT NULL,
                nested INTEGER NOT NULL CHECK (nested IN (0, 1))
            ) STRICT;

            CREATE TABLE running_monitors (
                pid INTEGER PRIMARY KEY CHECK (pid > 1),
                started INTEGER NOT NULL CHECK (started >= 0),
                uid INTEGER NOT NULL CHECK (uid > 0),
                boot_id TEXT NOT NULL
            ) STRICT;
            """
    )

    // Each child's session time per local day, which the time keeper counts
    // and the login-limits file and `familyctl limits` report: kept across
    // restarts of the Guard and of the machine. Self-contained, so that it
    // can be renumbered after other migrations.
    private static let version12 = StoreMigration(
        version: 12,
        summary: "session time used per child and local day",
        sql: """
            CREATE TABLE time_used (
                uid INTEGER NOT NULL CHECK (uid BETWEEN 0 AND 4294967295),
                day TEXT NOT NULL CHECK (length(day) = 10 AND day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
                seconds INTEGER NOT NULL CHECK (seconds BETWEEN 0 AND 86400),
                updated REAL NOT NULL,
                PRIMARY KEY (uid, day)
            ) STRICT;
            """
    )

    // The time limits approved apps set for their children (hours as the
    // app wrote them, read again by the policy: a row it cannot read is
    // reported, never trusted), and the more time guardians gave, one row a
    // grant, for the day it counts on.
    private static let version13 = StoreMigration(
        version: timeLimitsVersion,
        summary: "the time limits apps set for their children, and more time guardians gave",
        sql: """
            CREATE TABLE time_limits (
                user TEXT NOT NULL CHECK (user <> ''),
                uid INTEGER NOT NULL CHECK (uid BETWEEN 0 AND 4294967295),
                app_id TEXT NOT NULL CHECK (app_id <> ''),
                hours TEXT CHECK (hours IS NULL OR length(hours) BETWEEN 1 AND 4000),
                daily_seconds INTEGER CHECK (daily_seconds IS NULL OR daily_seconds BETWEEN 0 AND 86400),
                at_end TEXT NOT NULL CHECK (at_end IN ('lock', 'end')),
                set_by TEXT NOT NULL CHECK (set_by <> ''),
                set_at REAL NOT NULL,
                PRIMARY KEY (user, app_id)
            ) STRICT;

            CREATE TABLE more_time (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                user TEXT NOT NULL CHECK (user <> ''),
                uid INTEGER NOT NULL CHECK (uid BETWEEN 0 AND 4294967295),
                day TEXT NOT NULL CHECK (length(day) = 10),
                seconds INTEGER NOT NULL CHECK (seconds BETWEEN 0 AND 86400),
                open_until REAL NOT NULL CHECK (open_until >= 0),
                granted_by TEXT NOT NULL CHECK (granted_by <> ''),
                granted_at REAL NOT NULL
            ) STRICT;
            CREATE INDEX more_time_by_day ON more_time (uid, day);
            """
    )

    /// Brings the database up to the last of `migrations`. A new store is
    /// made in one transaction: it exists whole or not at all, with one
    /// flush to disk instead of one per step (on a disk busy writing, each
    /// flush can take seconds). An existing store is upgraded one
    /// transaction per step, so the steps already made stay when a later one fails.
    ///
    /// Each transaction re-reads the version under the write lock, so two
    /// processes opening the same store never run a step twice.
    /// - Throws: ``StoreError/foreignDatabase(path:)`` for another program's
    ///   database, ``StoreError/schemaTooNew(path:version:supported:)`` when the
    ///   store is newer than `migrations`, ``StoreError/migrationFailed(path:version:_:)``.
    package static func migrate(
        _ database: SQLiteDatabase,
        migrations: [StoreMigration] = migrations,
        logger: Logger = Logger(label: "store")
    ) throws(StoreError) {
        precondition(migrations.map(\.version) == Array(1..<(migrations.count + 1)),
                     "store migrations must be numbered 1, 2, 3… in order")
        let path = database.path
        var found = try checkCompatibility(database, supported: migrations.count)
        if found == 0 {
            // The step being run, for the error if it fails.
            var step = 0
            do {
                found = try database.transaction { () throws(SQLiteError) -> Int in
                    // Another process may have made the store since the header was read.
                    let version = try readHeader(database).version
                    guard version == 0, let last = migrations.last?.version else { return version }
                    for migration in migrations {
                        step = migration.version
                        try database.execute(migration.sql)
                    }
                    // An integer of our own, not input: safe to put in the SQL text.
                    try database.execute("PRAGMA user_version = \(last)")
                    for migration in migrations {
                        logger.notice("\(path): schema version \(migration.version): \(migration.summary)")
                    }
                    return last
                }
            } catch {
                throw .migrationFailed(path: path, version: max(step, 1), error)
            }
        }
        for migration in migrations where migration.version > found {
            do {
                try database.transaction { () throws(SQLiteError) in
                    // Another process may have run this step since the header was read.
                    guard try readHeader(database).version < migration.version else { return }
                    try database.execute(migration.sql)
                    try database.execute("PRAGMA user_version = \(migration.version)")
                }
            } catch {
                throw .migrationFailed(path: path, version: migration.version, error)
            }
            logger.notice("\(path): schema version \(migration.version): \(migration.summary)")
        }
    }

    /// Checks, without writing anything, that the database is empty or a
    /// Family Controls store this code can read.
    /// - Returns: the store's schema version (0 for an empty database).
    /// - Throws: ``StoreError/foreignDatabase(path:)``,
    ///   ``StoreError/schemaTooNew(path:version:supported:)``, or the read's failure.
    package static func checkCompatibility(_ database: SQLiteDatabase, supported: Int = currentVersion) throws(StoreError) -> Int {
        let path = database.path
        let header: (version: Int, applicationID: Int32, tables: Int)
        do {
            header = try readHeader(database)
        } catch {
            throw StoreConnection.storeError(error, path: path)
        }
        let isEmpty = header.applicationID == 0 && header.version == 0 && header.tables == 0
        guard isEmpty || header.applicationID == applicationID else {
            throw .foreignDatabase(path: path)
        }
        guard header.version <= supported else {
            throw .schemaTooNew(path: path, version: header.version, supported: supported)
        }
        return header.version
    }

    /// The schema version, the application ID, and how many tables, indexes and views the file has.
    package static func readHeader(_ database: SQLiteDatabase) throws(SQLiteError) -> (version: Int, applicationID: Int32, tables: Int) {
        let version = try database.firstRow("PRAGMA user_version") { Int($0.int64(at: 0)) } ?? 0
        let application = try database.firstRow("PRAGMA application_id") { Int32(truncatingIfNeeded: $0.int64(at: 0)) } ?? 0
        let tables = try database.firstRow("SELECT count(*) FROM sqlite_schema") { Int($0.int64(at: 0)) } ?? 0
        return (version, application, tables)
    }
}
