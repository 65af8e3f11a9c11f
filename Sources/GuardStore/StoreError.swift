#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import FamilyConfiguration
import SQLite

/// Why the Guard's store could not be opened, read or written.
///
/// Every case names the file or directory, and ``description`` tells an
/// administrator what to do. Nothing here ever deletes or downgrades a store.
package enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The store directory could not be created or inspected.
    case directoryUnavailable(path: String, Errno)
    /// The store directory is not a directory, is owned by another user, or
    /// others may write in it, so they could swap the database.
    case insecureDirectory(path: String, owner: UInt32, mode: UInt32)
    /// The database file (or its `-wal`/`-shm` companion) could not be created or protected.
    case fileUnavailable(path: String, Errno)
    /// The database path names something other than a regular file (a symlink, say).
    case notARegularFile(path: String)
    /// The file is not a SQLite database, or it is damaged.
    case notADatabase(path: String, SQLiteError)
    /// The file is a SQLite database, but not a Family Controls store.
    case foreignDatabase(path: String)
    /// The store was written by a newer release, with a schema this code does not know.
    case schemaTooNew(path: String, version: Int, supported: Int)
    /// Upgrading the schema to `version` failed; the store stays at the version before it.
    case migrationFailed(path: String, version: Int, SQLiteError)
    /// SQLite would not apply a setting the store relies on.
    case unsupportedSetting(path: String, setting: String, value: String)
    /// A row holds a value this code cannot read (the file was edited by hand, say).
    case invalidValue(path: String, table: String, column: String, value: String)
    /// Any other SQLite failure, such as a full disk or a violated constraint.
    case sqlite(path: String, SQLiteError)

    /// The SQLite failure behind the error, if there is one.
    package var sqliteError: SQLiteError? {
        switch self {
        case .notADatabase(_, let error), .migrationFailed(_, _, let error), .sqlite(_, let error): error
        default: nil
        }
    }

    package var description: String {
        switch self {
        case .directoryUnavailable(let path, let errno):
            return "Cannot use the store directory \(path): \(errno)."
        case .insecureDirectory(let path, let owner, let mode):
            let modeText = "0" + String(mode & 0o7777, radix: 8)
            return "Refusing the store directory \(path): it must be a directory owned by uid \(Self.effectiveUID) "
                + "that no one else can write (found owner \(owner), mode \(modeText)). "
                + "Fix it with: chown \(Self.effectiveUID) \(path) && chmod 700 \(path)"
        case .fileUnavailable(let path, let errno):
            return "Cannot create or protect the store file \(path): \(errno)."
        case .notARegularFile(let path):
            return "Refusing the store file \(path): it is not a regular file (a symbolic link or a directory?)."
        case .notADatabase(let path, let error):
            return "The store file \(path) is not a SQLite database or is damaged (\(error.message)). "
                + "The Guard will not overwrite it: move it aside and restore a backup, or start with no file "
                + "to begin with an empty store."
        case .foreignDatabase(let path):
            return "The store file \(path) is a SQLite database, but not a Family Controls store; "
                + "the Guard will not change it. Move it aside."
        case .schemaTooNew(let path, let version, let supported):
            return "The store \(path) has schema version \(version), but this version of Family Controls knows "
                + "versions up to \(supported): a newer release wrote it. Install that release (or a newer one); "
                + "the store was left unchanged."
        case .migrationFailed(let path, let version, let error):
            return "Upgrading the store \(path) to schema version \(version) failed and was rolled back: \(error)."
        case .unsupportedSetting(let path, let setting, let value):
            return "The store \(path) cannot be used: SQLite reports \(setting) = \(value) after the Guard set it."
        case .invalidValue(let path, let table, let column, let value):
            return "The store \(path) holds \"\(value)\" in \(table).\(column), which this version cannot read; "
                + "was the file edited by hand?"
        case .sqlite(let path, let error):
            return "Store \(path): \(error)."
        }
    }

    private static var effectiveUID: UInt32 { geteuid() }
}
