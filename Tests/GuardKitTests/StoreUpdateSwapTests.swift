import FamilyControlsModel
import Foundation
@testable import GuardKit
import LockEngine
import Testing
@testable import GuardStore

@Suite("Store: an update swapped in")
struct StoreUpdateSwapTests {
    @Test("the two locks exchange their entries and identities, and the approval follows the new folder, in one step")
    func swapRecords() throws {
        try withStore { store, _ throws in
            let old = LockRecord(user: "alice", appID: "org.example.Paint", path: "/apps/org.example.Paint",
                                 device: 7, inode: 100, state: .locked)
            let new = LockRecord(user: "alice", appID: ".org.example.Paint.update", path: "/apps/.org.example.Paint.update",
                                 device: 7, inode: 200, state: .locked)
            let oldEntries = [LockedEntry.sample("", kind: .directory, inode: 100), .sample("bin/paint", inode: 101)]
            let newEntries = [LockedEntry.sample("", kind: .directory, inode: 200), .sample("bin/paint", inode: 201),
                              .sample("VERSION", inode: 202)]
            try store.saveEntries(oldEntries, record: old)
            try store.saveEntries(newEntries, record: new)
            let approval = AuthorizationRecord(user: "alice", uid: 1000, appID: old.appID, member: .child, status: .approved,
                                               approvedBy: "bob", updatedAt: .now, appPath: old.path,
                                               appIdentity: FileIdentity(device: 7, inode: 200))
            try store.recordUpdateSwapped(
                user: "alice", appID: old.appID, stagedKey: new.appID, appPath: old.path, stagedPath: new.path,
                authorization: approval,
                audit: AuditEvent(at: .now, actor: "alice", action: .update, user: "alice", appID: old.appID,
                                  outcome: .swappedIn))
            let installed = try #require(try store.lockRecord(user: "alice", appID: old.appID))
            #expect(installed.inode == 200 && installed.path == old.path && installed.state == .locked)
            #expect(try store.entries(user: "alice", appID: old.appID) == newEntries)
            let released = try #require(try store.lockRecord(user: "alice", appID: new.appID))
            #expect(released.inode == 100 && released.path == new.path)
            #expect(try store.entries(user: "alice", appID: new.appID) == oldEntries)
            #expect(try store.allLockRecords().count == 2, "the parking key is gone")
            #expect(try store.authorization(user: "alice", appID: old.appID)?.appIdentity?.inode == 200)
        }
    }

    @Test("with either lock missing nothing is written")
    func missingLock() throws {
        try withStore { store, _ throws in
            let old = LockRecord(user: "alice", appID: "org.example.Paint", path: "/apps/org.example.Paint",
                                 device: 7, inode: 100, state: .locked)
            try store.saveEntries([.sample("", kind: .directory, inode: 100)], record: old)
            let approval = AuthorizationRecord(user: "alice", uid: 1000, appID: old.appID, member: .child, status: .approved,
                                               updatedAt: .now, appPath: old.path, appIdentity: FileIdentity(device: 7, inode: 300))
            #expect(throws: StoreError.self) {
                try store.recordUpdateSwapped(
                    user: "alice", appID: old.appID, stagedKey: ".org.example.Paint.update", appPath: old.path,
                    stagedPath: "/apps/.org.example.Paint.update", authorization: approval,
                    audit: AuditEvent(at: .now, actor: "alice", action: .update, user: "alice", outcome: .swappedIn))
            }
            #expect(try store.lockRecord(user: "alice", appID: old.appID) == old)
            #expect(try store.authorization(user: "alice", appID: old.appID) == nil)
        }
    }
}
