import Foundation
import GuardKit
import Testing
import GuardStore

@Suite("Store: durability")
struct StoreDurabilityTests {
    @Test("data survives dropping the store and reopening it; the last close folds the WAL into the file")
    func reopen() throws {
        try withTemporaryStoreDirectory { temporary throws in
            let directory = temporary + "/store"
            let wal = directory + "/" + Store.fileName + "-wal"
            var store: Store? = try Store.open(directory: directory, logger: .quiet)
            let id = try store?.save(.sample(), audit: .sample())
            try store?.saveEntries([.sample("")], record: .sample())
            // Committed but not yet checkpointed: the change lives in the WAL.
            #expect(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int ?? 0 > 0)
            store = nil
            #expect(FileManager.default.fileExists(atPath: wal) == false, "the connection was not closed")

            let reopened = try Store.open(directory: directory, logger: .quiet)
            #expect(try reopened.authorizations() == [.sample()])
            #expect(try reopened.auditEvents().map(\.id) == [id])
            #expect(try reopened.entries(user: "alice", appID: "org.example.Paint") == [.sample("")])
        }
    }

    @Test("a second store on the same file sees each committed change at once")
    func secondConnection() throws {
        try withStore { store, directory throws in
            let other = try Store.open(directory: directory, logger: .quiet)
            try store.save(.sample(status: .approved))
            #expect(try other.authorization(user: "alice", appID: "org.example.Paint")?.status == .approved)
            try other.save(.sample(status: .denied))
            #expect(try store.authorization(user: "alice", appID: "org.example.Paint")?.status == .denied)
        }
    }
}
