import Synchronization
import SystemKit
import SQLite

/// The Guard's durable record of authorizations, the audit trail, and the
/// lock journal: one SQLite database, `familycontrols.db`, in WAL mode with
/// `synchronous=FULL`, so every change is on disk before its method returns.
///
/// Safe to share between threads (the event loop and PAM threads): calls are
/// serialized on one connection. Every string is bound as a parameter, never
/// put in SQL text, so app IDs and user names from a hostile caller are only data.
/// Open it with ``open(directory:logger:)``; the connection closes when the
/// last reference goes away.
package final class Store: Sendable {
    /// The database file's name inside the store directory.
    package static let fileName = "familycontrols.db"
    /// How long a call waits for another process holding the write lock (an
    /// administrator's `sqlite3` shell, say) before failing with `SQLITE_BUSY`.
    package static let busyTimeoutMilliseconds = 5000

    /// The database file.
    package let path: String
    private let connection: Mutex<StoreConnection>

    init(database: sending SQLiteDatabase) {
        path = database.path
        connection = Mutex(StoreConnection(database: database))
    }

    /// Runs `body` with the connection, holding it exclusively.
    func withConnection<T: Sendable>(_ body: (StoreConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try connection.withLock { (connection: inout sending StoreConnection) throws(StoreError) -> T in
            try body(connection)
        }
    }

    /// Checks the database file for damage (`PRAGMA quick_check`).
    /// - Returns: `["ok"]` for a sound file, otherwise SQLite's description of each problem.
    package func integrityCheck() throws(StoreError) -> [String] {
        try withConnection { (connection) throws(StoreError) in
            try connection.query("PRAGMA quick_check") { row in row.string(at: 0) ?? "" }
        }
    }

    /// The settings the connection runs with, as SQLite reports them.
    package func settings() throws(StoreError) -> StoreSettings {
        try withConnection { (connection) throws(StoreError) in
            try connection.sqlite { () throws(SQLiteError) in
                let database = connection.database
                let journalMode = try database.firstRow("PRAGMA journal_mode") { $0.string(at: 0) }
                let synchronous = try database.firstRow("PRAGMA synchronous") { $0.int64(at: 0) } ?? -1
                let foreignKeys = try database.firstRow("PRAGMA foreign_keys") { $0.int64(at: 0) }
                let busyTimeout = try database.firstRow("PRAGMA busy_timeout") { $0.int64(at: 0) }
                return StoreSettings(
                    journalMode: journalMode.flatMap { $0 } ?? "",
                    synchronous: StoreSettings.synchronousNames[synchronous] ?? String(synchronous),
                    foreignKeys: foreignKeys == 1,
                    busyTimeoutMilliseconds: Int(busyTimeout ?? 0),
                    schemaVersion: try StoreSchema.readHeader(database).version
                )
            }
        }
    }
}
