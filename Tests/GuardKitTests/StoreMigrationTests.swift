import Foundation
import GuardKit
import Testing
import FamilyConfiguration
import SQLite
import SystemKit
import UpdateSignature
import GuardStore

@Suite("Store: schema migrations")
struct StoreMigrationTests {
    static let tables = ["audit", "authorizations", "counters", "lock_entries", "lock_entry_chunks", "locks", "login_sessions",
                         "more_time", "running_monitors", "sqlite_sequence", "time_limits", "time_used"]

    private func tableNames(_ path: String) throws -> [String] {
        let database = try SQLiteDatabase(path: path, flags: [.readOnly])
        let statement = try database.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        var names: [String] = []
        while try statement.step() { names.append(statement.string(at: 0) ?? "") }
        return names
    }

    /// Makes `directory` and runs `prepare` on a database at its store path.
    private func withPreparedFile(_ prepare: (SQLiteDatabase) throws -> Void, _ body: (String, String) throws -> Void) throws {
        try withTemporaryStoreDirectory { temporary in
            let directory = temporary + "/store"
            #expect(mkdir(directory, 0o700) == 0)
            let path = directory + "/" + Store.fileName
            try prepare(try SQLiteDatabase(path: path))
            try body(directory, path)
        }
    }

    @Test("a zero-length file migrates to the current schema")
    func zeroLengthFile() throws {
        try withPreparedFile({ _ in }) { directory, path throws in
            #expect(FileManager.default.fileExists(atPath: path))
            let store = try Store.open(directory: directory, logger: .quiet)
            #expect(try store.settings().schemaVersion == StoreSchema.currentVersion)
            #expect(try tableNames(path) == Self.tables)
            #expect(try integer("PRAGMA application_id", in: path) == Int64(StoreSchema.applicationID))
        }
    }

    @Test("an empty version-0 database migrates to the current schema")
    func versionZero() throws {
        try withPreparedFile({ try $0.execute("CREATE TABLE scratch (a); DROP TABLE scratch;") }) { directory, path throws in
            #expect(try integer("PRAGMA user_version", in: path) == 0)
            let store = try Store.open(directory: directory, logger: .quiet)
            try store.save(.sample())
            #expect(try integer("PRAGMA user_version", in: path) == Int64(StoreSchema.currentVersion))
            #expect(try tableNames(path) == Self.tables)
        }
    }

    @Test("a store newer than the code is refused with the exact error and left unchanged")
    func newerSchemaRefused() throws {
        let future = { (database: SQLiteDatabase) throws in
            try database.execute("""
                PRAGMA application_id = \(StoreSchema.applicationID);
                PRAGMA user_version = 99;
                CREATE TABLE from_the_future (a);
                """)
        }
        try withPreparedFile(future) { directory, path throws in
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let error = #expect(throws: StoreError.self) { try Store.open(directory: directory, logger: .quiet) }
            #expect(error == .schemaTooNew(path: path, version: 99, supported: StoreSchema.currentVersion))
            #expect(error?.description == "The store \(path) has schema version 99, but this version of Family "
                + "Controls knows versions up to \(StoreSchema.currentVersion): a newer release wrote it. Install that "
                + "release (or a newer one); the store was left unchanged.")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            #expect(try integer("PRAGMA user_version", in: path) == 99)
            #expect(try tableNames(path) == ["from_the_future"])
        }
    }

    @Test("another program's database is refused", arguments: [
        "CREATE TABLE notes (text)",
        "PRAGMA application_id = 1234; CREATE TABLE notes (text)",
        "PRAGMA user_version = 1",
    ])
    func foreignDatabaseRefused(_ sql: String) throws {
        try withPreparedFile({ try $0.execute(sql) }) { directory, path throws in
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(throws: StoreError.foreignDatabase(path: path)) {
                try Store.open(directory: directory, logger: .quiet)
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the foreign file was changed")
        }
    }

    /// Runs `migrations` on `database`, which must fail at step `version` with SQLite's `message`.
    private func expectFailure(of migrations: [StoreMigration], at version: Int, on database: SQLiteDatabase, _ message: String) {
        let error = #expect(throws: StoreError.self) {
            try StoreSchema.migrate(database, migrations: migrations, logger: .quiet)
        }
        guard case .migrationFailed(database.path, version, let sqlite)? = error else {
            Issue.record("expected migrationFailed at version \(version), got \(String(describing: error))")
            return
        }
        #expect(sqlite.message == message)
    }

    @Test("upgrading, a failing step is rolled back, and the steps before it stay")
    func failedStepRollsBack() throws {
        let migrations = [
            // As the real first step does, it marks the file as a store.
            StoreMigration(version: 1, summary: "first",
                           sql: "PRAGMA application_id = \(StoreSchema.applicationID); CREATE TABLE first (a)"),
            StoreMigration(version: 2, summary: "broken", sql: "CREATE TABLE second (a); INSERT INTO missing VALUES (1);"),
        ]
        // A store at version 1, which the second step upgrades.
        let version1 = { (database: SQLiteDatabase) throws in
            try StoreSchema.migrate(database, migrations: Array(migrations.prefix(1)), logger: .quiet)
        }
        try withPreparedFile(version1) { _, path throws in
            #expect(try integer("PRAGMA user_version", in: path) == 1)
            expectFailure(of: migrations, at: 2, on: try SQLiteDatabase(path: path), "no such table: missing")
            #expect(try integer("PRAGMA user_version", in: path) == 1)
            #expect(try tableNames(path) == ["first"])
        }
    }

    @Test("a new store is made whole or not at all: a failing step leaves the database empty")
    func newStoreIsOneTransaction() throws {
        let migrations = [
            StoreMigration(version: 1, summary: "first", sql: "CREATE TABLE first (a)"),
            StoreMigration(version: 2, summary: "second", sql: "CREATE TABLE second (a)"),
            StoreMigration(version: 3, summary: "broken", sql: "INSERT INTO missing VALUES (1)"),
        ]
        try withPreparedFile({ _ in }) { _, path throws in
            let database = try SQLiteDatabase(path: path)
            expectFailure(of: migrations, at: 3, on: database, "no such table: missing")
            #expect(try integer("PRAGMA user_version", in: path) == 0)
            #expect(try tableNames(path).isEmpty)
            // Made again without the broken step, it is whole.
            try StoreSchema.migrate(database, migrations: Array(migrations.prefix(2)), logger: .quiet)
            #expect(try integer("PRAGMA user_version", in: path) == 2)
            #expect(try tableNames(path) == ["first", "second"])
        }
    }

    @Test("a version 3 store's audit events read back as happening once, and count repeats after")
    func version3AuditCountsRepeats() throws {
        let version3 = { (database: SQLiteDatabase) throws in
            try StoreSchema.migrate(database, migrations: Array(StoreSchema.migrations.prefix(3)), logger: .quiet)
            try database.execute("""
                INSERT INTO audit (at, actor, action, user, app_id, member, outcome, detail)
                VALUES (1000, 'alice', 'revoke', 'alice', 'org.example.Paint', NULL, 'no effect', 'not approved');
                """)
        }
        try withPreparedFile(version3) { directory, path throws in
            #expect(try integer("PRAGMA user_version", in: path) == 3)
            let store = try Store.open(directory: directory, logger: .quiet)
            #expect(try store.settings().schemaVersion == StoreSchema.currentVersion)
            let before = try store.auditEvents()
            #expect(before.map(\.count) == [1])
            #expect(before.first?.lastAt == nil)
            var again = try #require(before.first)
            again.at = UnixTime(seconds: 1001)
            #expect(try store.appendAudit(again, coalescingWithin: 60) == again.id)
            #expect(try store.auditEvents().map(\.count) == [2])
        }
    }

    /// An approval made before the Guard recorded the update key a guardian
    /// was shown trusts none: each of its updates is a guardian's decision.
    @Test("a version 7 store's approvals trust no update key and know no version")
    func version7ApprovalsTrustNoUpdateKey() throws {
        let version7 = { (database: SQLiteDatabase) throws in
            try StoreSchema.migrate(database, migrations: Array(StoreSchema.migrations.prefix(7)), logger: .quiet)
            try database.execute("""
                INSERT INTO authorizations (user, app_id, uid, member, status, approved_by, updated_at, app_path)
                VALUES ('alice', 'org.example.Paint', 1001, 'child', 'approved', 'bob', 1700000000.25, '/opt/apps/org.example.Paint');
                """)
        }
        try withPreparedFile(version7) { directory, _ throws in
            let store = try Store.open(directory: directory, logger: .quiet)
            let record = try #require(try store.authorization(user: "alice", appID: "org.example.Paint"))
            #expect(record.status == .approved)
            #expect(record.updateKey == nil)
            #expect(record.highestVersion == nil)
            #expect(record == .sample())
        }
    }

    @Test("an approval's trusted update key and highest version read back as saved; a malformed key fails closed")
    func updateKeyAndVersionRoundTrip() throws {
        try withStore { store, _ throws in
            var record = AuthorizationRecord.sample()
            record.updateKey = try UpdateKey(declaration: "ed25519:" + String(repeating: "A", count: 42) + "E=")
            record.highestVersion = "2.0.1"
            try store.save(record)
            #expect(try store.authorization(user: "alice", appID: "org.example.Paint") == record)
            let database = try SQLiteDatabase(path: store.path)
            try database.execute("UPDATE authorizations SET update_key = 'ed25519:nonsense'")
            #expect(throws: StoreError.invalidValue(path: store.path, table: "authorizations", column: "update_key",
                                                    value: "ed25519:nonsense")) {
                try store.authorization(user: "alice", appID: "org.example.Paint")
            }
        }
    }

    @Test("migrating a current store again changes nothing")
    func migrationIsIdempotent() throws {
        try withStore { store, _ throws in
            try store.save(.sample())
            let database = try SQLiteDatabase(path: store.path)
            try StoreSchema.migrate(database, logger: .quiet)
            #expect(try integer("PRAGMA user_version", in: store.path) == Int64(StoreSchema.currentVersion))
            #expect(try store.authorizations() == [.sample()])
        }
    }
}
