import Foundation
import GuardKit
import Testing
import LockEngine
import SQLite
import GuardStore

@Suite("Store: lock journal")
struct StoreLockJournalTests {
    static let entries: [LockedEntry] = [
        LockedEntry(relativePath: "", kind: .directory, device: .max, inode: .max, uid: .max, gid: 0,
                    mode: 0o7777, wasImmutable: true),
        .sample("bin", kind: .directory, inode: 2),
        .sample("bin/paint", inode: 3),
        .sample("share/link", kind: .symlink, inode: 4),
        .sample("dev-node", kind: .other, inode: 5),
    ]

    @Test("a record and its entries read back equal, entries in the order saved")
    func roundTrip() throws {
        try withStore { store, _ throws in
            #expect(try store.lockRecord(user: "alice", appID: "org.example.Paint") == nil)
            #expect(try store.entries(user: "alice", appID: "org.example.Paint") == [])
            let record = LockRecord(user: "alice", appID: "org.example.Paint", path: "/opt/apps/paint",
                                    device: .max, inode: UInt64(Int64.max) + 1, state: .locking)
            // Reversed, so a sort by path would not pass by accident.
            try store.saveEntries(Self.entries.reversed(), record: record)
            #expect(try store.lockRecord(user: "alice", appID: "org.example.Paint") == record)
            #expect(try store.entries(user: "alice", appID: "org.example.Paint") == Self.entries.reversed())
        }
    }

    @Test("every lock state round-trips", arguments: [
        LockState.unlocked, .locking, .locked, .unlocking, .unenforced(reason: "no immutable flag on nfs4"),
    ])
    func states(_ state: LockState) throws {
        try withStore { store, _ throws in
            try store.saveLockRecord(.sample(state: state))
            #expect(try store.lockRecord(user: "alice", appID: "org.example.Paint")?.state == state)
        }
    }

    @Test("saving entries again replaces them all")
    func replaceEntries() throws {
        try withStore { store, _ throws in
            try store.saveEntries(Self.entries, record: .sample(state: .locking))
            let replacement = [LockedEntry.sample("", kind: .directory), .sample("new-file", inode: 9)]
            try store.saveEntries(replacement, record: .sample(state: .locked))
            #expect(try store.entries(user: "alice", appID: "org.example.Paint") == replacement)
            #expect(try store.lockRecord(user: "alice", appID: "org.example.Paint")?.state == .locked)
        }
    }

    @Test("updating a record keeps its entries")
    func updateKeepsEntries() throws {
        try withStore { store, _ throws in
            try store.saveEntries(Self.entries, record: .sample(state: .locking))
            try store.saveLockRecord(.sample(state: .locked))
            #expect(try store.lockRecord(user: "alice", appID: "org.example.Paint")?.state == .locked)
            #expect(try store.entries(user: "alice", appID: "org.example.Paint") == Self.entries)
        }
    }

    @Test("deleting a lock removes its entries and nobody else's")
    func deleteCascades() throws {
        try withStore { store, _ throws in
            try store.saveEntries(Self.entries, record: .sample(appID: "org.example.Paint"))
            try store.saveEntries(Self.entries, record: .sample(appID: "org.example.Chess"))
            try store.deleteLock(user: "alice", appID: "org.example.Paint")
            #expect(try store.lockRecord(user: "alice", appID: "org.example.Paint") == nil)
            #expect(try store.entries(user: "alice", appID: "org.example.Paint") == [])
            #expect(try integer("SELECT count(*) FROM lock_entry_chunks WHERE app_id = 'org.example.Paint'", in: store.path) == 0)
            #expect(try store.allLockRecords() == [.sample(appID: "org.example.Chess")])
            #expect(try store.entries(user: "alice", appID: "org.example.Chess") == Self.entries)
        }
    }

    @Test("a failed save of entries changes neither the record nor the old entries")
    func saveEntriesIsAtomic() throws {
        try withStore { store, _ throws in
            try store.saveEntries(Self.entries, record: .sample(state: .locked))
            // A failure half-way through: the second chunk of a big list is refused.
            let database = try SQLiteDatabase(path: store.path, flags: [.readWrite])
            try database.execute("""
                CREATE TRIGGER refuse_second AFTER INSERT ON lock_entry_chunks WHEN NEW.seq = 1
                BEGIN SELECT RAISE(ABORT, 'refused for the test'); END
                """)
            let big = (0..<(LockEntryCodec.entriesPerChunk + 10)).map { LockedEntry.sample("f\($0)") }
            #expect(throws: StoreError.self) {
                try store.saveEntries(big, record: .sample(state: .unlocking))
            }
            #expect(try store.lockRecord(user: "alice", appID: "org.example.Paint")?.state == .locked)
            #expect(try store.entries(user: "alice", appID: "org.example.Paint") == Self.entries)
        }
    }

    @Test("two entries with one path are refused before anything is written")
    func duplicatePathsAreRefused() throws {
        try withStore { store, _ throws in
            try store.saveEntries(Self.entries, record: .sample(state: .locked))
            let duplicate = [LockedEntry.sample("a"), .sample("b"), .sample("a")]
            #expect(throws: StoreError.invalidValue(path: store.path, table: "lock_entry_chunks", column: "relative_path",
                                                    value: "a (twice)")) {
                try store.saveEntries(duplicate, record: .sample(state: .unlocking))
            }
            #expect(try store.entries(user: "alice", appID: "org.example.Paint") == Self.entries)
        }
    }

    @Test("entries kept one per row by an earlier version are still read, and later chunks replace them by path")
    func legacyRowsAreRead() throws {
        try withStore { store, _ throws in
            try store.saveLockRecord(.sample(state: .locked))
            let database = try SQLiteDatabase(path: store.path, flags: [.readWrite])
            for entry in [LockedEntry.sample("a"), .sample("b")] {
                try database.run("""
                    INSERT INTO lock_entries (user, app_id, relative_path, kind, device, inode, uid, gid, mode, was_immutable)
                    VALUES ('alice', 'org.example.Paint', ?1, 'regular', 2049, ?2, 1001, 1001, 420, 0)
                    """, [.text(entry.relativePath), .integer(Int64(entry.inode))])
            }
            var replaced = LockedEntry.sample("a")
            replaced.inode = 7
            try store.appendEntries([replaced, .sample("c")], record: .sample(state: .locked))
            #expect(try store.entries(user: "alice", appID: "org.example.Paint") == [replaced, .sample("b"), .sample("c")])
        }
    }

    @Test("a damaged chunk is an error naming it, never a shorter list", arguments: [
        [], Array("FCJ1".utf8), Array("XXXX\u{0}\u{0}\u{0}\u{0}".utf8),
        [0x46, 0x43, 0x4a, 0x31, 1, 0, 0, 0, 9],
    ] as [[UInt8]])
    func damagedChunk(_ blob: [UInt8]) throws {
        try withStore { store, _ throws in
            try store.saveEntries(Self.entries, record: .sample(state: .locked))
            let database = try SQLiteDatabase(path: store.path, flags: [.readWrite])
            try database.run("UPDATE lock_entry_chunks SET entries = ?1", [.blob(blob)])
            #expect(throws: StoreError.self) { try store.entries(user: "alice", appID: "org.example.Paint") }
        }
    }

    @Test("appending entries adds rows and replaces those at the same path, keeping the order of the rest")
    func appendEntries() throws {
        try withStore { store, _ throws in
            try store.saveEntries([.sample("a"), .sample("b")], record: .sample(state: .locking))
            var replaced = LockedEntry.sample("a")
            replaced.inode = 99
            try store.appendEntries([.sample("c"), replaced], record: .sample(state: .locking))
            let entries = try store.entries(user: "alice", appID: "org.example.Paint")
            #expect(entries.map(\.relativePath) == ["a", "b", "c"])
            #expect(entries.first?.inode == 99)
        }
    }

    @Test("all records are listed sorted by user then app")
    func allRecords() throws {
        try withStore { store, _ throws in
            for (user, app) in [("bob", "b"), ("alice", "z"), ("alice", "a")] {
                try store.saveLockRecord(.sample(user: user, appID: app))
            }
            #expect(try store.allLockRecords().map { "\($0.user)/\($0.appID)" } == ["alice/a", "alice/z", "bob/b"])
        }
    }

    @Test("the store works through the LockJournal protocol")
    func throughProtocol() throws {
        try withStore { store, _ throws in
            let journal: any LockJournal = store
            try journal.saveEntries([.sample("")], record: .sample())
            #expect(try journal.entries(user: "alice", appID: "org.example.Paint") == [.sample("")])
            try journal.deleteLock(user: "alice", appID: "org.example.Paint")
            #expect(try journal.allLockRecords() == [])
        }
    }
}
