import CSQLite

/// A failed SQLite call: its result codes, SQLite's message, and what was being done.
///
/// The message comes from `sqlite3_errmsg(3)` when the connection still holds
/// it, otherwise from `sqlite3_errstr(3)`.
package struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_CONSTRAINT`), for matching in `catch`.
    package var code: SQLiteResultCode
    /// The extended result code (`SQLITE_CONSTRAINT_CHECK`); equal to ``code`` when SQLite gave no detail.
    package var extendedCode: SQLiteResultCode
    /// SQLite's explanation, such as "CHECK constraint failed: actor <> ''".
    package var message: String
    /// The SQL statement or the operation ("open /var/lib/…") that failed.
    package var operation: String

    /// An error with an explicit message; `code` may be extended.
    package init(code: SQLiteResultCode, message: String? = nil, operation: String) {
        self.code = code.primary
        self.extendedCode = code
        self.message = message ?? code.message
        self.operation = Self.condensed(operation)
    }

    /// The error `rawCode` left on `connection`, reading its message while it is still current.
    ///
    /// Callers hold the connection exclusively, so no other call can replace
    /// the message between the failure and this read.
    init(_ rawCode: CInt, connection: OpaquePointer?, operation: String) {
        let code = SQLiteResultCode(rawValue: rawCode)
        var message: String?
        // sqlite3_errmsg describes the connection's latest failure; use it only
        // when that failure is this one, or the text would mislead.
        if let connection, sqlite3_extended_errcode(connection) == rawCode {
            message = String(cString: sqlite3_errmsg(connection))
        }
        self.init(code: code, message: message, operation: operation)
    }

    package var description: String {
        "\(operation): \(message) (\(extendedCode.name))"
    }

    /// Multi-line SQL becomes one short line, so an administrator's log stays readable.
    private static func condensed(_ text: String) -> String {
        let words = text.split(whereSeparator: { $0.isWhitespace })
        let line = words.joined(separator: " ")
        let limit = 200
        return line.count > limit ? String(line.prefix(limit)) + "…" : line
    }
}
