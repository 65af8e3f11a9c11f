/// The SQLite settings a ``Store`` connection runs with, for diagnostics and tests.
package struct StoreSettings: Hashable, Sendable {
    /// `PRAGMA journal_mode`: "wal" unless the filesystem cannot share memory between processes.
    package var journalMode: String
    /// `PRAGMA synchronous`: "full" means every commit is flushed to disk before it returns.
    package var synchronous: String
    /// `PRAGMA foreign_keys`: lock entries depend on it to go with their lock.
    package var foreignKeys: Bool
    /// `PRAGMA busy_timeout`, in milliseconds.
    package var busyTimeoutMilliseconds: Int
    /// `PRAGMA user_version`: how many schema migrations the file has run.
    package var schemaVersion: Int

    package init(journalMode: String, synchronous: String, foreignKeys: Bool, busyTimeoutMilliseconds: Int, schemaVersion: Int) {
        self.journalMode = journalMode
        self.synchronous = synchronous
        self.foreignKeys = foreignKeys
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.schemaVersion = schemaVersion
    }

    /// The names of `PRAGMA synchronous` levels.
    static let synchronousNames: [Int64: String] = [0: "off", 1: "normal", 2: "full", 3: "extra"]
}
