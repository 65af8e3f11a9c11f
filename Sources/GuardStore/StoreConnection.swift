import SQLite
/// The store's SQLite connection, reporting every failure as a ``StoreError``
/// that names the database file.
///
/// Not thread-safe: ``Store`` keeps it behind a mutex.
struct StoreConnection {
    let database: SQLiteDatabase

    var path: String { database.path }

    /// Runs one statement with `values` bound, to completion.
    /// - Returns: how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ values: [SQLiteValue] = []) throws(StoreError) -> Int {
        try sqlite { () throws(SQLiteError) in try database.run(sql, values) }
    }

    /// Runs a query and turns each row into a value with `row`.
    func query<T>(
        _ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) throws(StoreError) -> T
    ) throws(StoreError) -> [T] {
        let statement = try sqlite { () throws(SQLiteError) in
            let statement = try database.cachedStatement(sql)
            try statement.bind(values)
            return statement
        }
        var rows: [T] = []
        while try sqlite({ () throws(SQLiteError) in try statement.step() }) {
            rows.append(try row(statement))
        }
        return rows
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction; with `synchronous=FULL`
    /// the changes are on disk when this returns.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try database.transaction(.immediate, mapError: { Self.storeError($0, path: path) }, body)
    }

    /// The rowid of the latest INSERT.
    var lastInsertRowID: Int64 { database.lastInsertRowID }
    var changes: Int { database.changes }

    /// Runs SQLite calls, reporting their failure as a ``StoreError``.
    func sqlite<T>(_ body: () throws(SQLiteError) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// The ``StoreError`` for a SQLite failure on the store at `path`: damage
    /// gets its own case, since the remedy (restore a backup) differs.
    static func storeError(_ error: SQLiteError, path: String) -> StoreError {
        switch error.code {
        case .notADatabase, .corrupt: .notADatabase(path: path, error)
        default: .sqlite(path: path, error)
        }
    }

    /// The text in `column`, which must not be NULL.
    func text(_ statement: SQLiteStatement, _ column: Int, table: String, name: String) throws(StoreError) -> String {
        guard let text = statement.string(at: column) else {
            throw .invalidValue(path: path, table: table, column: name, value: "NULL")
        }
        return text
    }

    /// The text in `column` read as `T` by `parse`, which returns nil for text it does not know.
    func decode<T>(
        _ statement: SQLiteStatement, _ column: Int, table: String, name: String, _ parse: (String) -> T?
    ) throws(StoreError) -> T {
        let raw = try text(statement, column, table: table, name: name)
        guard let value = parse(raw) else {
            throw .invalidValue(path: path, table: table, column: name, value: raw)
        }
        return value
    }

    /// The integer in `column` as `T`, which must hold it exactly.
    func integer<T: FixedWidthInteger>(
        _ statement: SQLiteStatement, _ column: Int, table: String, name: String, as type: T.Type = T.self
    ) throws(StoreError) -> T {
        let raw = statement.int64(at: column)
        guard let value = T(exactly: raw) else {
            throw .invalidValue(path: path, table: table, column: name, value: String(raw))
        }
        return value
    }
}
