#if canImport(Glibc)
import Glibc
#endif

/// A value bound to a statement parameter: one of SQLite's five storage classes.
package enum SQLiteValue: Hashable, Sendable {
    /// SQL NULL.
    case null
    /// A signed 64-bit integer.
    case integer(Int64)
    /// An IEEE double (SQLite stores NaN as NULL).
    case real(Double)
    /// UTF-8 text, embedded NULs included.
    case text(String)
    /// Bytes, stored as they are.
    case blob([UInt8])

    /// `text`, or `null` when `value` is nil.
    package static func text(orNull value: String?) -> SQLiteValue {
        value.map { .text($0) } ?? .null
    }
}
