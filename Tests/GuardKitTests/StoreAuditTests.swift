import FamilyControlsModel
import Foundation
import GuardKit
import SystemKit
import Testing
import GuardStore

@Suite("Store: audit trail")
struct StoreAuditTests {
    @Test("events read back in the order they were appended, with increasing ids")
    func order() throws {
        try withStore { store, _ throws in
            // Times deliberately out of order: the trail follows append order, not the clock.
            let events = [
                AuditEvent.sample(action: .request, seconds: 300),
                AuditEvent.sample(action: .approve, seconds: 100),
                AuditEvent.sample(actor: AuditEvent.guardActor, action: .lock, seconds: 200),
            ]
            var ids: [Int64] = []
            for event in events { ids.append(try store.appendAudit(event)) }
            #expect(ids == ids.sorted() && Set(ids).count == 3)
            let stored = try store.auditEvents()
            #expect(stored.map(\.action) == [.request, .approve, .lock])
            #expect(stored.map(\.id) == ids)
            #expect(stored.map { $0.at.seconds } == [300, 100, 200])
        }
    }

    @Test("every field round-trips, including the optional ones left out")
    func fields() throws {
        try withStore { store, _ throws in
            let full = AuditEvent.sample()
            let sparse = AuditEvent(at: UnixTime(seconds: 5), actor: AuditEvent.rootActor, action: "rename",
                                    user: "dave", outcome: "success")
            let ids = [try store.appendAudit(full), try store.appendAudit(sparse)]
            var expected = [full, sparse]
            expected[0].id = ids[0]
            expected[1].id = ids[1]
            #expect(try store.auditEvents() == expected)
        }
    }

    @Test("an id on an event being appended is ignored; the store assigns its own")
    func idIgnored() throws {
        try withStore { store, _ throws in
            let first = try store.appendAudit(.sample())
            var event = AuditEvent.sample()
            event.id = first
            let second = try store.appendAudit(event)
            #expect(second == first + 1)
            #expect(try store.auditEvents().count == 2)
        }
    }

    @Test("filtering by user, and a limit that keeps the newest events in order")
    func filterAndLimit() throws {
        try withStore { store, _ throws in
            for index in 0..<10 {
                try store.appendAudit(.sample(user: index.isMultiple(of: 2) ? "alice" : "bob", seconds: Double(index)))
            }
            #expect(try store.auditEvents(user: "bob").map(\.at.seconds) == [1, 3, 5, 7, 9])
            #expect(try store.auditEvents(limit: 3).map(\.at.seconds) == [7, 8, 9])
            #expect(try store.auditEvents(user: "alice", limit: 2).map(\.at.seconds) == [6, 8])
            #expect(try store.auditEvents(limit: 0) == [])
            #expect(try store.auditEvents(user: "nobody") == [])
        }
    }

    @Test("filtering by app and by time, and reading on before an id, as familyctl log pages back")
    func appSinceAndPaging() throws {
        try withStore { store, _ throws in
            var ids: [Int64] = []
            for index in 0..<8 {
                ids.append(try store.appendAudit(.sample(appID: index < 4 ? "org.example.Paint" : "org.example.Chess",
                                                         seconds: 1000 + Double(index))))
            }
            try store.appendAudit(.sample(appID: nil, seconds: 2000))
            #expect(try store.auditEvents(appID: "org.example.Chess").map(\.at.seconds) == [1004, 1005, 1006, 1007])
            #expect(try store.auditEvents(since: 1006).map(\.at.seconds) == [1006, 1007, 2000])
            #expect(try store.auditEvents(appID: "org.example.Paint", since: 1002).map(\.at.seconds) == [1002, 1003])
            #expect(try store.auditEvents(beforeID: ids[5], limit: 2).map(\.id) == [ids[3], ids[4]])
            #expect(try store.auditEvents(beforeID: ids[0]) == [])
        }
    }

    @Test("pruning removes exactly the events older than the cutoff and says how many")
    func prune() throws {
        try withStore { store, _ throws in
            for seconds in [10.0, 20, 29.5, 30, 40] { try store.appendAudit(.sample(seconds: seconds)) }
            #expect(try store.pruneAudit(before: 30) == 3)
            #expect(try store.auditEvents().map(\.at.seconds) == [30, 40])
            #expect(try store.pruneAudit(before: 30) == 0)
            // Ids keep increasing after a prune: a reader paging by id never sees one twice.
            let next = try store.appendAudit(.sample(seconds: 50))
            #expect(try store.auditEvents().map(\.id).allSatisfy { ($0 ?? 0) <= next })
            #expect(next > 5)
        }
    }

    @Test("the same event again within the window is counted on its row; anything different is a row of its own")
    func repeatsAreCounted() throws {
        try withStore { store, _ throws in
            let refused = AuditEvent.sample(action: .revoke, outcome: .noEffect, seconds: 1000)
            let first = try store.appendAudit(refused, coalescingWithin: 60)
            var again = refused
            for seconds in [1010.0, 1020, 1059] {
                again.at = UnixTime(seconds: seconds)
                #expect(try store.appendAudit(again, coalescingWithin: 60) == first)
            }
            // Another app's event in between does not break the count.
            var other = refused
            other.appID = "org.example.Chess"
            try store.appendAudit(other, coalescingWithin: 60)
            again.at = UnixTime(seconds: 1059.5)
            #expect(try store.appendAudit(again, coalescingWithin: 60) == first)
            // A different detail, outcome or actor, past the window, or appended without a window: a new row.
            var detail = again
            detail.detail = "another reason"
            var outcome = again
            outcome.outcome = .refused
            var actor = again
            actor.actor = "carol"
            var late = again
            late.at = UnixTime(seconds: 1061)
            for event in [detail, outcome, actor, late] { #expect(try store.appendAudit(event, coalescingWithin: 60) != first) }
            #expect(try store.appendAudit(again) != first)

            let stored = try store.auditEvents()
            #expect(stored.count == 7)
            let counted = try #require(stored.first { $0.id == first })
            #expect(counted.count == 5)
            #expect(counted.at.seconds == 1000)
            #expect(counted.lastAt?.seconds == 1059.5)
            #expect(stored.filter { $0.id != first }.allSatisfy { $0.count == 1 && $0.lastAt == nil })
            // A row is as recent as its last repeat, for --since and for pruning.
            #expect(try store.auditEvents(since: 1050).contains { $0.id == first })
            // (Only the other app's event, at 1000 and never repeated, is older than 1059.)
            #expect(try store.pruneAudit(before: 1059) == 1)
            #expect(try store.auditEvents().contains { $0.id == first })
        }
    }

    @Test("an event without an actor, action or outcome is refused",
          arguments: [AuditEvent.sample(actor: ""), .sample(action: ""), .sample(outcome: "")])
    func requiredFields(_ event: AuditEvent) throws {
        try withStore { store, _ throws in
            let error = #expect(throws: StoreError.self) { try store.appendAudit(event) }
            #expect(error?.sqliteError?.extendedCode == .constraintCheck)
            #expect(try store.auditEvents() == [])
        }
    }
}
