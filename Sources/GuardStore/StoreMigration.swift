/// One step of the store's schema history: the SQL that takes a store from
/// `version - 1` to `version`.
///
/// Migrations are append-only: a released one is never edited, because stores
/// in the field already ran it.
package struct StoreMigration: Sendable {
    /// The `PRAGMA user_version` the store has after this step.
    package var version: Int
    /// What the step changes, for the Guard's log.
    package var summary: String
    /// The statements; they run in one transaction with the version bump.
    package var sql: String

    package init(version: Int, summary: String, sql: String) {
        self.version = version
        self.summary = summary
        self.sql = sql
    }
}
