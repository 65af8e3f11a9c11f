import Foundation
import GuardKit
import Synchronization
import Testing
import GuardStore

@Suite("Store: concurrency")
struct StoreConcurrencyTests {
    @Test("threads sharing one store, and a second store on the same file, lose no writes")
    func manyThreads() throws {
        try withStore { store, directory throws in
            let second = try Store.open(directory: directory, logger: .quiet)
            let threadCount = 8
            let savesPerThread = 25
            let failures = Mutex<[String]>([])
            let group = DispatchGroup()
            for thread in 0..<threadCount {
                group.enter()
                // Real threads, not the cooperative pool: the Guard calls the store from
                // its event loop and from PAM threads. Odd threads use the second
                // connection, so the two also contend for SQLite's write lock.
                let target = thread.isMultiple(of: 2) ? store : second
                Thread {
                    defer { group.leave() }
                    for index in 0..<savesPerThread {
                        do {
                            let user = "user\(thread)"
                            try target.save(.sample(user: user, appID: "app\(index)"), audit: .sample(user: user))
                            try target.saveEntries([.sample("")], record: .sample(user: user, appID: "app\(index)"))
                            _ = try target.authorizations(user: user)
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                }.start()
            }
            group.wait()
            #expect(failures.withLock { $0 } == [])
            let total = threadCount * savesPerThread
            #expect(try store.authorizations().count == total)
            #expect(try store.allLockRecords().count == total)
            let events = try store.auditEvents(limit: total * 2)
            #expect(events.count == total)
            #expect(Set(events.compactMap(\.id)).count == total)
            for thread in 0..<threadCount {
                #expect(try store.authorizations(user: "user\(thread)").count == savesPerThread)
            }
        }
    }
}
