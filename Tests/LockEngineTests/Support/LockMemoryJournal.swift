import LockEngine
import Synchronization

/// A `LockJournal` in memory, for lock engine tests: every method is one
/// atomic step, as a transaction is in the real store. It also counts writes,
/// so a test can check that entries are saved in one batch.
final class LockMemoryJournal: LockJournal {
    private struct State {
        var records: [String: LockRecord] = [:]
        var entries: [String: [LockedEntry]] = [:]
        var entryWrites = 0
        var appendWrites = 0
        var recordWrites = 0
    }

    private let state = Mutex(State())

    init() {}

    private static func key(_ user: String, _ appID: String) -> String { user + "\u{0}" + appID }

    func lockRecord(user: String, appID: String) throws -> LockRecord? {
        state.withLock { $0.records[Self.key(user, appID)] }
    }

    func allLockRecords() throws -> [LockRecord] {
        state.withLock { $0.records.values.sorted { ($0.user, $0.appID) < ($1.user, $1.appID) } }
    }

    func saveLockRecord(_ record: LockRecord) throws {
        state.withLock {
            $0.records[Self.key(record.user, record.appID)] = record
            $0.recordWrites += 1
        }
    }

    func saveEntries(_ entries: [LockedEntry], record: LockRecord) throws {
        state.withLock {
            let key = Self.key(record.user, record.appID)
            $0.records[key] = record
            $0.entries[key] = entries
            $0.entryWrites += 1
        }
    }

    func appendEntries(_ entries: [LockedEntry], record: LockRecord) throws {
        state.withLock {
            let key = Self.key(record.user, record.appID)
            $0.records[key] = record
            let paths = Set(entries.map(\.relativePath))
            $0.entries[key, default: []].removeAll { paths.contains($0.relativePath) }
            $0.entries[key, default: []] += entries
            $0.appendWrites += 1
        }
    }

    func entries(user: String, appID: String) throws -> [LockedEntry] {
        state.withLock { $0.entries[Self.key(user, appID)] ?? [] }
    }

    func deleteLock(user: String, appID: String) throws {
        state.withLock {
            let key = Self.key(user, appID)
            $0.records[key] = nil
            $0.entries[key] = nil
        }
    }

    /// How many times `saveEntries` ran.
    var entryWrites: Int { state.withLock { $0.entryWrites } }
    /// How many times `appendEntries` ran.
    var appendWrites: Int { state.withLock { $0.appendWrites } }
}
