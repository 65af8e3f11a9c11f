import CSQLite

/// A SQLite result code, primary (`SQLITE_BUSY`) or extended (`SQLITE_CONSTRAINT_CHECK`).
///
/// Maps to the `SQLITE_*` result codes and `sqlite3_errstr(3)`. Connections
/// opened by ``SQLiteDatabase`` report extended codes; ``primary`` recovers the
/// family a `catch` usually cares about.
package struct SQLiteResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: CInt

    package init(rawValue: CInt) {
        self.rawValue = rawValue
    }

    /// The primary code of an extended code (its low eight bits); a primary code is its own.
    package var primary: SQLiteResultCode { SQLiteResultCode(rawValue: rawValue & 0xff) }

    /// SQLite's English text for the code (`sqlite3_errstr`), such as "database is locked".
    package var message: String { String(cString: sqlite3_errstr(rawValue)) }

    /// The C name of the code (`SQLITE_CONSTRAINT_CHECK`), or the primary name and
    /// the number for extended codes this type does not name.
    package var name: String {
        if let name = Self.names[rawValue] { return name }
        return "\(Self.names[primary.rawValue] ?? "SQLITE_UNKNOWN") (extended \(rawValue))"
    }

    package var description: String { "\(name): \(message)" }

    // Primary codes.
    package static let ok = SQLiteResultCode(rawValue: SQLITE_OK)
    package static let error = SQLiteResultCode(rawValue: SQLITE_ERROR)
    package static let `internal` = SQLiteResultCode(rawValue: SQLITE_INTERNAL)
    package static let permission = SQLiteResultCode(rawValue: SQLITE_PERM)
    package static let abort = SQLiteResultCode(rawValue: SQLITE_ABORT)
    package static let busy = SQLiteResultCode(rawValue: SQLITE_BUSY)
    package static let locked = SQLiteResultCode(rawValue: SQLITE_LOCKED)
    package static let noMemory = SQLiteResultCode(rawValue: SQLITE_NOMEM)
    package static let readOnly = SQLiteResultCode(rawValue: SQLITE_READONLY)
    package static let interrupt = SQLiteResultCode(rawValue: SQLITE_INTERRUPT)
    package static let ioError = SQLiteResultCode(rawValue: SQLITE_IOERR)
    package static let corrupt = SQLiteResultCode(rawValue: SQLITE_CORRUPT)
    package static let notFound = SQLiteResultCode(rawValue: SQLITE_NOTFOUND)
    package static let full = SQLiteResultCode(rawValue: SQLITE_FULL)
    package static let cannotOpen = SQLiteResultCode(rawValue: SQLITE_CANTOPEN)
    package static let `protocol` = SQLiteResultCode(rawValue: SQLITE_PROTOCOL)
    package static let schema = SQLiteResultCode(rawValue: SQLITE_SCHEMA)
    package static let tooBig = SQLiteResultCode(rawValue: SQLITE_TOOBIG)
    package static let constraint = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT)
    package static let mismatch = SQLiteResultCode(rawValue: SQLITE_MISMATCH)
    package static let misuse = SQLiteResultCode(rawValue: SQLITE_MISUSE)
    package static let authorization = SQLiteResultCode(rawValue: SQLITE_AUTH)
    package static let range = SQLiteResultCode(rawValue: SQLITE_RANGE)
    package static let notADatabase = SQLiteResultCode(rawValue: SQLITE_NOTADB)
    package static let row = SQLiteResultCode(rawValue: SQLITE_ROW)
    package static let done = SQLiteResultCode(rawValue: SQLITE_DONE)

    // Extended codes the store reacts to or reports. The C macros are
    // expressions Swift does not import, so they are rebuilt from sqlite3.h.
    package static let constraintCheck = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (1 << 8))
    package static let constraintForeignKey = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (3 << 8))
    package static let constraintNotNull = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (5 << 8))
    package static let constraintPrimaryKey = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (6 << 8))
    package static let constraintUnique = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
    package static let constraintDataType = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (12 << 8))
    package static let busySnapshot = SQLiteResultCode(rawValue: SQLITE_BUSY | (2 << 8))
    package static let cannotOpenSymlink = SQLiteResultCode(rawValue: SQLITE_CANTOPEN | (6 << 8))
    package static let readOnlyDatabaseMoved = SQLiteResultCode(rawValue: SQLITE_READONLY | (4 << 8))
    package static let ioErrorFsync = SQLiteResultCode(rawValue: SQLITE_IOERR | (4 << 8))

    private static let names: [CInt: String] = [
        SQLITE_OK: "SQLITE_OK", SQLITE_ERROR: "SQLITE_ERROR", SQLITE_INTERNAL: "SQLITE_INTERNAL",
        SQLITE_PERM: "SQLITE_PERM", SQLITE_ABORT: "SQLITE_ABORT", SQLITE_BUSY: "SQLITE_BUSY",
        SQLITE_LOCKED: "SQLITE_LOCKED", SQLITE_NOMEM: "SQLITE_NOMEM", SQLITE_READONLY: "SQLITE_READONLY",
        SQLITE_INTERRUPT: "SQLITE_INTERRUPT", SQLITE_IOERR: "SQLITE_IOERR", SQLITE_CORRUPT: "SQLITE_CORRUPT",
        SQLITE_NOTFOUND: "SQLITE_NOTFOUND", SQLITE_FULL: "SQLITE_FULL", SQLITE_CANTOPEN: "SQLITE_CANTOPEN",
        SQLITE_PROTOCOL: "SQLITE_PROTOCOL", SQLITE_EMPTY: "SQLITE_EMPTY", SQLITE_SCHEMA: "SQLITE_SCHEMA",
        SQLITE_TOOBIG: "SQLITE_TOOBIG", SQLITE_CONSTRAINT: "SQLITE_CONSTRAINT", SQLITE_MISMATCH: "SQLITE_MISMATCH",
        SQLITE_MISUSE: "SQLITE_MISUSE", SQLITE_NOLFS: "SQLITE_NOLFS", SQLITE_AUTH: "SQLITE_AUTH",
        SQLITE_FORMAT: "SQLITE_FORMAT", SQLITE_RANGE: "SQLITE_RANGE", SQLITE_NOTADB: "SQLITE_NOTADB",
        SQLITE_NOTICE: "SQLITE_NOTICE", SQLITE_WARNING: "SQLITE_WARNING", SQLITE_ROW: "SQLITE_ROW",
        SQLITE_DONE: "SQLITE_DONE",
        SQLITE_CONSTRAINT | (1 << 8): "SQLITE_CONSTRAINT_CHECK",
        SQLITE_CONSTRAINT | (3 << 8): "SQLITE_CONSTRAINT_FOREIGNKEY",
        SQLITE_CONSTRAINT | (5 << 8): "SQLITE_CONSTRAINT_NOTNULL",
        SQLITE_CONSTRAINT | (6 << 8): "SQLITE_CONSTRAINT_PRIMARYKEY",
        SQLITE_CONSTRAINT | (8 << 8): "SQLITE_CONSTRAINT_UNIQUE",
        SQLITE_CONSTRAINT | (12 << 8): "SQLITE_CONSTRAINT_DATATYPE",
        SQLITE_BUSY | (2 << 8): "SQLITE_BUSY_SNAPSHOT",
        SQLITE_CANTOPEN | (6 << 8): "SQLITE_CANTOPEN_SYMLINK",
        SQLITE_READONLY | (4 << 8): "SQLITE_READONLY_DBMOVED",
        SQLITE_IOERR | (4 << 8): "SQLITE_IOERR_FSYNC",
    ]
}
