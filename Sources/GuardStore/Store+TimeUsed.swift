import SystemKit
import SQLite

extension Store {
    /// The session time each child used on local day `day` (`YYYY-MM-DD`), in
    /// seconds, by uid; a child with none that day is absent.
    /// - Throws: ``StoreError``.
    package func timeUsed(on day: String) throws(StoreError) -> [UInt32: Int] {
        try withConnection { (connection) throws(StoreError) in
            let rows = try connection.query("SELECT uid, seconds FROM time_used WHERE day = ?1", [.text(day)]) { row in
                (UInt32(truncatingIfNeeded: row.int64(at: 0)), Int(row.int64(at: 1)))
            }
            return Dictionary(rows, uniquingKeysWith: max)
        }
    }

    /// Records the session time each of `used` (uid to seconds, each at most
    /// a day) used on `day`, in one transaction. A day's time only grows: a
    /// smaller count (a Guard that could not read the store at its start and
    /// counted from 0) never replaces a larger one recorded;
    /// rows older than `keepFrom` (a day, `YYYY-MM-DD`) are removed.
    /// Durable when it returns.
    /// - Throws: ``StoreError``.
    package func recordTimeUsed(_ used: [UInt32: Int], on day: String, at time: UnixTime,
                                keepFrom: String? = nil) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                for (uid, seconds) in used.sorted(by: { $0.key < $1.key }) {
                    try connection.execute("""
                        INSERT INTO time_used (uid, day, seconds, updated) VALUES (?1, ?2, ?3, ?4)
                        ON CONFLICT (uid, day) DO UPDATE SET seconds = max(seconds, excluded.seconds), updated = excluded.updated
                        """, [.integer(Int64(uid)), .text(day), .integer(Int64(min(max(seconds, 0), 86_400))),
                              .real(time.seconds)])
                }
                if let keepFrom {
                    try connection.execute("DELETE FROM time_used WHERE day < ?1", [.text(keepFrom)])
                }
            }
        }
    }
}
