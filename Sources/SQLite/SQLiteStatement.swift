import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A compiled SQL statement, finalized when the object is released.
///
/// Not thread-safe; it belongs to its ``SQLiteDatabase``'s owner. Parameters
/// and columns are numbered as in SQL: parameters from 1, columns from 0.
package final class SQLiteStatement {
    /// The statement's SQL, for error messages.
    package let sql: String
    /// Kept so the connection outlives the statement.
    private let database: SQLiteDatabase
    private let handle: OpaquePointer
    /// Whether the compiled statement goes back to its connection's cache
    /// when this object is released, instead of being finalized.
    private let recycles: Bool

    /// Compiles `sql` on `database` (`sqlite3_prepare_v2`).
    ///
    /// - Throws: ``SQLiteError``; ``SQLiteResultCode/misuse`` when `sql` is empty
    ///   or holds more than one statement, which would otherwise be ignored silently.
    init(database: SQLiteDatabase, sql: String, recycles: Bool = false) throws(SQLiteError) {
        if recycles, let cached = database.takeCached(sql) {
            self.sql = sql
            self.database = database
            self.handle = cached
            self.recycles = true
            return
        }
        var compiled: OpaquePointer?
        var hasTrailingSQL = false
        let result = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let result = sqlite3_prepare_v2(database.handle, text, -1, &compiled, &tail)
            if let tail {
                hasTrailingSQL = String(cString: tail).contains { !$0.isWhitespace && $0 != ";" }
            }
            return result
        }
        guard result == SQLITE_OK else {
            throw database.error(result, operation: sql)
        }
        guard let compiled, !hasTrailingSQL else {
            sqlite3_finalize(compiled)
            throw SQLiteError(code: .misuse, message: "expected exactly one SQL statement", operation: sql)
        }
        self.sql = sql
        self.database = database
        self.handle = compiled
        self.recycles = recycles
    }

    deinit {
        if recycles {
            database.keep(handle, for: sql)
        } else {
            // Its result repeats the latest step's error, which step already threw.
            sqlite3_finalize(handle)
        }
    }

    /// Binds `value` to the parameter at `index` (1-based; `?NNN` names its index).
    ///
    /// Text and blobs are copied (`SQLITE_TRANSIENT`), so the caller's storage
    /// may go away. Text keeps embedded NUL characters.
    /// - Throws: ``SQLiteError`` (``SQLiteResultCode/range`` for a bad index).
    package func bind(_ value: SQLiteValue, at index: Int) throws(SQLiteError) {
        let position = CInt(clamping: index)
        let result: CInt
        switch value {
        case .null:
            result = sqlite3_bind_null(handle, position)
        case .integer(let number):
            result = sqlite3_bind_int64(handle, position, number)
        case .real(let number):
            result = sqlite3_bind_double(handle, position, number)
        case .text(let text):
            // The explicit length keeps embedded NULs that strlen would cut at.
            let length = sqlite3_uint64(text.utf8.count)
            result = text.withCString { bytes in
                sqlite3_bind_text64(handle, position, bytes, length, sqliteTransient, UInt8(SQLITE_UTF8))
            }
        case .blob(let data):
            // A NULL pointer would bind SQL NULL, so an empty blob needs its own call.
            if data.isEmpty {
                result = sqlite3_bind_zeroblob(handle, position, 0)
            } else {
                result = data.withUnsafeBytes { bytes in
                    sqlite3_bind_blob64(handle, position, bytes.baseAddress, sqlite3_uint64(bytes.count), sqliteTransient)
                }
            }
        }
        guard result == SQLITE_OK else {
            throw database.error(result, operation: "bind parameter \(index) of \(sql)")
        }
    }

    /// Clears every binding and binds `values` to parameters 1, 2, 3…
    package func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            try bind(value, at: offset + 1)
        }
    }

    /// Runs the statement to its next row (`sqlite3_step`).
    /// - Returns: true when a row is ready to read, false when the statement is done.
    /// - Throws: ``SQLiteError``, such as a constraint failure or `SQLITE_BUSY`.
    package func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(result, operation: sql)
        }
    }

    /// Rewinds the statement so it can run again, keeping its bindings (`sqlite3_reset`).
    package func reset() {
        // The result repeats the latest step's error, which step already threw.
        sqlite3_reset(handle)
    }

    /// Sets every parameter back to NULL (`sqlite3_clear_bindings`).
    package func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    /// How many columns each row has (`sqlite3_column_count`).
    package var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// Whether the column holds SQL NULL in the current row.
    package func isNull(at column: Int) -> Bool {
        sqlite3_column_type(handle, CInt(clamping: column)) == SQLITE_NULL
    }

    /// The column as whichever storage class it holds in the current row.
    package func value(at column: Int) -> SQLiteValue {
        switch sqlite3_column_type(handle, CInt(clamping: column)) {
        case SQLITE_INTEGER: .integer(int64(at: column))
        case SQLITE_FLOAT: .real(double(at: column))
        case SQLITE_TEXT: string(at: column).map { .text($0) } ?? .null
        case SQLITE_BLOB: bytes(at: column).map { .blob($0) } ?? .null
        default: .null
        }
    }

    /// The column as an integer (`sqlite3_column_int64`); NULL reads as 0.
    package func int64(at column: Int) -> Int64 {
        sqlite3_column_int64(handle, CInt(clamping: column))
    }

    /// The column as a floating-point number (`sqlite3_column_double`); NULL reads as 0.
    package func double(at column: Int) -> Double {
        sqlite3_column_double(handle, CInt(clamping: column))
    }

    /// The column as text (`sqlite3_column_text`), or nil for NULL.
    package func string(at column: Int) -> String? {
        let index = CInt(clamping: column)
        // column_text before column_bytes, so the length is that of the UTF-8 text.
        guard let text = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column as bytes (`sqlite3_column_blob`), or nil for NULL.
    package func bytes(at column: Int) -> [UInt8]? {
        let index = CInt(clamping: column)
        guard !isNull(at: column) else { return nil }
        guard let bytes = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, index))))
    }
}

@available(*, unavailable, message: "one owner at a time, like its SQLiteDatabase")
extension SQLiteStatement: Sendable {}

/// `SQLITE_TRANSIENT`: SQLite copies the bytes before the bind call returns.
/// The C macro is a cast Swift does not import.
private var sqliteTransient: sqlite3_destructor_type {
    unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
