import CSQLite

/// One open SQLite connection, closed when the object is released.
///
/// Not thread-safe: one owner at a time. ``Store`` keeps its connection behind
/// a mutex; statements keep their connection alive, so it is closed only after
/// the last statement is finalized.
package final class SQLiteDatabase {
    /// The file this connection opened.
    package let path: String
    /// The `sqlite3 *` handle; valid while this object lives.
    let handle: OpaquePointer
    /// Compiled statements kept for the next run of the same SQL, by their
    /// text. Compiling runs SQLite's parser and planner every time, which
    /// takes longer than most of the store's queries and keeps that code
    /// resident in a long-lived process. Handles, not statements: a statement
    /// keeps its connection alive, and the connection must still close.
    private var cache: [String: OpaquePointer] = [:]
    /// More distinct statements than the store asks are not kept.
    private static let cacheLimit = 64

    /// Opens (or creates) the database at `path` (`sqlite3_open_v2`).
    ///
    /// SQLite reads the file lazily, so a file that is not a database opens
    /// fine and fails with ``SQLiteResultCode/notADatabase`` on first use.
    /// - Throws: ``SQLiteError`` when the file cannot be opened.
    package init(path: String, flags: SQLiteOpenFlags = .default) throws(SQLiteError) {
        var opened: OpaquePointer?
        let result = sqlite3_open_v2(path, &opened, flags.rawValue, nil)
        guard result == SQLITE_OK, let opened else {
            let error = SQLiteError(result == SQLITE_OK ? SQLITE_NOMEM : result,
                                    connection: opened, operation: "open \(path)")
            // A failed open still allocates a connection (to carry the message); free it.
            sqlite3_close_v2(opened)
            throw error
        }
        self.path = path
        self.handle = opened
        sqlite3_extended_result_codes(opened, 1)
    }

    deinit {
        for compiled in cache.values { sqlite3_finalize(compiled) }
        // Statements retain their connection, so none is left to keep this one
        // open; close_v2 would otherwise defer the close rather than fail.
        sqlite3_close_v2(handle)
    }

    /// Runs one or more SQL statements that take no parameters (`sqlite3_exec`);
    /// any rows they return are discarded.
    /// - Throws: ``SQLiteError`` for the first statement that fails.
    package func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        defer { sqlite3_free(errorMessage) }
        guard result == SQLITE_OK else {
            throw SQLiteError(code: SQLiteResultCode(rawValue: result),
                              message: errorMessage.map { String(cString: $0) }, operation: sql)
        }
    }

    /// Compiles one SQL statement (`sqlite3_prepare_v2`).
    /// - Throws: ``SQLiteError`` for a syntax error, an unknown table, or more than one statement.
    package func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(database: self, sql: sql)
    }

    /// The statement for `sql`, compiled once and run again: released, it is
    /// rewound (ending its read of the database), its parameters cleared, and
    /// kept for the next call with the same text. A second use of the same
    /// text while the first is still held compiles its own.
    /// - Throws: as ``prepare(_:)``.
    package func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(database: self, sql: sql, recycles: true)
    }

    /// The kept handle for `sql`, now the caller's.
    func takeCached(_ sql: String) -> OpaquePointer? {
        cache.removeValue(forKey: sql)
    }

    /// Rewinds a released statement's handle and keeps it for `sql`, or finalizes it when one is kept already.
    func keep(_ compiled: OpaquePointer, for sql: String) {
        // reset's result repeats the latest step's error, which step already threw.
        sqlite3_reset(compiled)
        sqlite3_clear_bindings(compiled)
        guard cache[sql] == nil, cache.count < Self.cacheLimit else {
            sqlite3_finalize(compiled)
            return
        }
        cache[sql] = compiled
    }

    /// Runs one statement with `values` bound to its parameters, to completion.
    /// - Returns: how many rows it inserted, updated or deleted (`sqlite3_changes64`).
    @discardableResult
    package func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        let statement = try cachedStatement(sql)
        try statement.bind(values)
        while try statement.step() {}
        return changes
    }

    /// The first row of a query, read by `read`, or nil when it returns no rows.
    package func firstRow<T>(
        _ sql: String, _ values: [SQLiteValue] = [], _ read: (SQLiteStatement) -> T
    ) throws(SQLiteError) -> T? {
        let statement = try cachedStatement(sql)
        try statement.bind(values)
        return try statement.step() ? read(statement) : nil
    }

    /// Waits up to `milliseconds` for another connection's lock before failing
    /// with ``SQLiteResultCode/busy`` (`sqlite3_busy_timeout`).
    package func setBusyTimeout(milliseconds: Int) throws(SQLiteError) {
        let result = sqlite3_busy_timeout(handle, CInt(clamping: milliseconds))
        guard result == SQLITE_OK else {
            throw SQLiteError(result, connection: handle, operation: "sqlite3_busy_timeout")
        }
    }

    /// Rows changed by the latest INSERT, UPDATE or DELETE (`sqlite3_changes64`).
    package var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The rowid of the latest successful INSERT (`sqlite3_last_insert_rowid`).
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open (`sqlite3_get_autocommit` is 0).
    package var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The error a failed call just left on this connection.
    func error(_ result: CInt, operation: String) -> SQLiteError {
        SQLiteError(result, connection: handle, operation: operation)
    }
}

@available(*, unavailable, message: "one owner at a time; share a Store, which serializes access")
extension SQLiteDatabase: Sendable {}
