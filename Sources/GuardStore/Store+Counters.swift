import SQLite

extension Store {
    /// Counters whose values never repeat, restarts included.
    package enum Counter: String, Sendable {
        /// The number of a request waiting for a parent or guardian.
        case request
    }

    /// Adds one to `counter` and returns its new value (1 the first time).
    /// Durable when it returns.
    package func next(_ counter: Counter) throws(StoreError) -> Int64 {
        try withConnection { (connection) throws(StoreError) in
            let values = try connection.query("""
                INSERT INTO counters (name, value) VALUES (?1, 1)
                ON CONFLICT (name) DO UPDATE SET value = value + 1
                RETURNING value
                """, [.text(counter.rawValue)]) { (statement) throws(StoreError) -> Int64 in statement.int64(at: 0) }
            guard let value = values.first else {
                throw .invalidValue(path: connection.path, table: "counters", column: "value", value: "none")
            }
            return value
        }
    }
}
