import CSQLite

/// How ``SQLiteDatabase`` opens a file: the `SQLITE_OPEN_*` flags of `sqlite3_open_v2(3)`.
package struct SQLiteOpenFlags: OptionSet, Hashable, Sendable {
    package let rawValue: CInt

    package init(rawValue: CInt) {
        self.rawValue = rawValue
    }

    /// Open for reading only (`SQLITE_OPEN_READONLY`).
    package static let readOnly = SQLiteOpenFlags(rawValue: SQLITE_OPEN_READONLY)
    /// Open for reading and writing (`SQLITE_OPEN_READWRITE`).
    package static let readWrite = SQLiteOpenFlags(rawValue: SQLITE_OPEN_READWRITE)
    /// Create the file if it does not exist (`SQLITE_OPEN_CREATE`).
    package static let create = SQLiteOpenFlags(rawValue: SQLITE_OPEN_CREATE)
    /// Serialize every call on the connection inside SQLite (`SQLITE_OPEN_FULLMUTEX`).
    package static let fullMutex = SQLiteOpenFlags(rawValue: SQLITE_OPEN_FULLMUTEX)
    /// Refuse a path whose last component is a symbolic link (`SQLITE_OPEN_NOFOLLOW`).
    package static let noFollow = SQLiteOpenFlags(rawValue: SQLITE_OPEN_NOFOLLOW)
    /// Report extended result codes from the start (`SQLITE_OPEN_EXRESCODE`).
    package static let extendedResultCodes = SQLiteOpenFlags(rawValue: SQLITE_OPEN_EXRESCODE)

    /// Read-write, created if missing, serialized, no symlink at the path, extended codes.
    package static let `default`: SQLiteOpenFlags = [.readWrite, .create, .fullMutex, .noFollow, .extendedResultCodes]
}
