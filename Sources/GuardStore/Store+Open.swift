#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import FamilyConfiguration
import SQLite

extension Store {
    /// Opens the store in `directory`, creating the directory (mode 0700) and
    /// the database (mode 0600) when they are missing, and upgrading the schema.
    ///
    /// - Parameters:
    ///   - directory: the store directory, such as `/var/lib/familycontrols`;
    ///     its parent must exist.
    ///   - logger: where schema upgrades and degraded settings are reported.
    /// - Throws: ``StoreError``: an unsafe directory, a file that is not a
    ///   Family Controls store, a schema newer than this code, or a SQLite failure.
    ///   The file is never wiped or downgraded.
    package static func open(directory: String, logger: Logger = Logger(label: "store")) throws(StoreError) -> Store {
        try prepareDirectory(directory)
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + fileName
        try prepareDatabaseFile(path)
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: path)
        } catch {
            throw StoreConnection.storeError(error, path: path)
        }
        try configure(database, logger: logger)
        try StoreSchema.migrate(database, logger: logger)
        return Store(database: database)
    }

    /// Opens the store in `directory` for reading only: nothing is created,
    /// configured, migrated or written, so a check beside a running Guard
    /// (`--check-config`, perhaps of a newer version) leaves its store as it is.
    /// - Returns: the store and its schema version; nil when there is no database file.
    /// - Throws: ``StoreError``: a file that is not a Family Controls store, a
    ///   schema newer than this code, or a SQLite failure.
    package static func openForReading(directory: String) throws(StoreError) -> (store: Store, version: Int)? {
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + fileName
        guard access(path, F_OK) == 0 else { return nil }
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: path, flags: [.readOnly, .fullMutex, .noFollow, .extendedResultCodes])
        } catch {
            throw StoreConnection.storeError(error, path: path)
        }
        let version = try StoreSchema.checkCompatibility(database)
        return (Store(database: database), version)
    }

    private static func configure(_ database: SQLiteDatabase, logger: Logger) throws(StoreError) {
        let connection = StoreConnection(database: database)
        try connection.sqlite { () throws(SQLiteError) in
            try database.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        }
        // The first read of the file: a damaged, foreign or newer file is
        // refused before the journal mode, or anything else, is written to it.
        _ = try StoreSchema.checkCompatibility(database)
        let journalMode = try connection.sqlite { () throws(SQLiteError) -> String? in
            try database.firstRow("PRAGMA journal_mode = WAL") { $0.string(at: 0) } ?? nil
        }
        if journalMode?.lowercased() != "wal" {
            // Still durable with a rollback journal; only concurrent reads suffer.
            logger.warning("\(database.path): WAL journal unavailable (journal_mode is \(journalMode ?? "unknown")); "
                + "is the store on a network filesystem?")
        }
        // FULL: a commit reaches the disk before it returns, so an approval
        // survives a power cut once the client has been told it succeeded.
        try connection.execute("PRAGMA synchronous = FULL")
        try connection.execute("PRAGMA foreign_keys = ON")
        // A lock journals thousands of entries in one transaction: room for them in memory.
        try connection.execute("PRAGMA cache_size = -16384")
        let foreignKeys = try connection.query("PRAGMA foreign_keys") { $0.int64(at: 0) }.first
        guard foreignKeys == 1 else {
            throw .unsupportedSetting(path: database.path, setting: "foreign_keys", value: "\(foreignKeys ?? 0)")
        }
    }
}
