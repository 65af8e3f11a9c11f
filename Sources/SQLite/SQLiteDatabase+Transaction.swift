extension SQLiteDatabase {
    /// When a transaction takes its locks (`BEGIN DEFERRED|IMMEDIATE|EXCLUSIVE`).
    package enum TransactionKind: String, Sendable {
        /// Locks on first read or write; a later write can fail with `SQLITE_BUSY`.
        case deferred = "DEFERRED"
        /// Takes the write lock at once, so a writer never fails half-way for a lock.
        case immediate = "IMMEDIATE"
        /// Like `immediate`; in WAL mode the two are the same.
        case exclusive = "EXCLUSIVE"
    }

    /// Runs `body` in a transaction: committed when `body` returns, rolled back
    /// when it throws or when the commit fails.
    ///
    /// - Parameters:
    ///   - kind: when the transaction locks; writers want `.immediate`.
    ///   - mapError: turns a failure of `BEGIN` or `COMMIT` into the caller's error type.
    ///   - body: the work; it must not begin a transaction of its own.
    /// - Throws: what `body` throws, or a mapped ``SQLiteError`` from `BEGIN` or `COMMIT`.
    package func transaction<T, E: Error>(
        _ kind: TransactionKind = .immediate,
        mapError: (SQLiteError) -> E,
        _ body: () throws(E) -> T
    ) throws(E) -> T {
        do {
            try execute("BEGIN \(kind.rawValue) TRANSACTION")
        } catch {
            throw mapError(error)
        }
        let value: T
        do {
            value = try body()
        } catch {
            rollback()
            throw error
        }
        do {
            try execute("COMMIT TRANSACTION")
        } catch {
            rollback()
            throw mapError(error)
        }
        return value
    }

    /// Runs `body` in a transaction whose errors are all ``SQLiteError``s.
    package func transaction<T>(
        _ kind: TransactionKind = .immediate,
        _ body: () throws(SQLiteError) -> T
    ) throws(SQLiteError) -> T {
        try transaction(kind, mapError: { $0 }, body)
    }

    private func rollback() {
        // After SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM and some SQLITE_BUSY
        // failures SQLite has already rolled back; a second ROLLBACK would fail.
        guard isInTransaction else { return }
        // If ROLLBACK itself fails there is nothing left to try, and the error
        // the caller needs is the one that caused it; closing the connection
        // rolls back whatever remains.
        try? execute("ROLLBACK TRANSACTION")
    }
}
