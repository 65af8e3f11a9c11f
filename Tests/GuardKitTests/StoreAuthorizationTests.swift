import FamilyControlsModel
import Foundation
import GuardKit
import SQLite
import SystemKit
import Testing
import GuardIdentity
import GuardStore

@Suite("Store: authorizations")
struct StoreAuthorizationTests {
    @Test("a saved authorization reads back equal, and a missing one is nil")
    func roundTrip() throws {
        try withStore { store, _ throws in
            #expect(try store.authorization(user: "alice", appID: "org.example.Paint") == nil)
            let record = AuthorizationRecord.sample(approvedBy: nil, seconds: Date().timeIntervalSince1970)
            try store.save(record)
            #expect(try store.authorization(user: "alice", appID: "org.example.Paint") == record)
            #expect(try store.authorization(user: "alice", appID: "org.example.Other") == nil)
            #expect(try store.authorization(user: "bob", appID: "org.example.Paint") == nil)
        }
    }

    /// An approval of a Flatpak app moved into the Guard's installation, with `runtime` pinned.
    private func movedRecord(runtime: FlatpakRuntimePin?) -> AuthorizationRecord {
        var record = AuthorizationRecord.sample(status: .approved)
        let commit = String(repeating: "ab", count: 32)
        record.flatpak = FlatpakDeployment(recordedAt: "/var/lib/familycontrols-flatpak/app/org.example.Paint/x86_64/stable/\(commit)",
                                           system: true, uid: record.uid)
        record.flatpakOrigin = FlatpakOrigin(remote: "flathub", url: "https://dl.flathub.org/repo/", commitTime: 1_764_000_000,
                                             runtime: runtime)
        return record
    }

    @Test("a moved Flatpak app reads back with its remote, commit time and runtime; half an origin or a runtime is refused",
          arguments: [("flatpak_url", nil), ("flatpak_runtime_commit", "org.example.Platform/x86_64/24.08")])
    func movedFlatpakRoundTrip(halved column: String, runtime name: String?) throws {
        try withStore { store, _ throws in
            let record = movedRecord(runtime: name.map {
                FlatpakRuntimePin(name: $0, commit: String(repeating: "ef", count: 32), timestamp: 1_764_000_100)
            })
            try store.save(record)
            #expect(try store.authorizations() == [record])
            let database = try SQLiteDatabase(path: store.path, flags: [.readWrite])
            let error = #expect(throws: SQLiteError.self) {
                try database.execute("UPDATE authorizations SET \(column) = NULL")
            }
            #expect(error?.extendedCode == .constraintCheck)
            #expect(try store.authorizations() == [record])
        }
    }

    @Test("every status the Guard stores, and every member, round-trips",
          arguments: [AuthorizationStatus.notDetermined, .denied, .approved], FamilyControlsMember.allCases)
    func enumerations(_ status: AuthorizationStatus, _ member: FamilyControlsMember) throws {
        try withStore { store, _ throws in
            let record = AuthorizationRecord.sample(status: status, member: member)
            try store.save(record)
            #expect(try store.authorizations() == [record])
        }
    }

    @Test("approvedWithDataAccess, which the Guard never grants, is refused by the schema")
    func dataAccessIsNeverStored() throws {
        try withStore { store, _ throws in
            let record = AuthorizationRecord.sample(status: .approved)
            try store.save(record)
            // No AuthorizationStatus holds it: only SQL written by hand can try to store it.
            let database = try SQLiteDatabase(path: store.path, flags: [.readWrite])
            let error = #expect(throws: SQLiteError.self) {
                try database.execute("UPDATE authorizations SET status = 'approvedWithDataAccess'")
            }
            #expect(error?.extendedCode == .constraintCheck)
            #expect(try store.authorizations() == [record])
        }
    }

    @Test("saving again replaces the record for the same user and app")
    func upsert() throws {
        try withStore { store, _ throws in
            try store.save(.sample(status: .approved))
            var revoked = AuthorizationRecord.sample(status: .notDetermined, approvedBy: nil)
            revoked.uid = 1002
            revoked.appPath = "/opt/apps/moved"
            revoked.updatedAt = UnixTime(seconds: 1_800_000_000)
            try store.save(revoked)
            #expect(try store.authorizations() == [revoked])
        }
    }

    @Test("delete removes only the named record and says whether there was one")
    func delete() throws {
        try withStore { store, _ throws in
            try store.save(.sample(appID: "org.example.Paint"))
            try store.save(.sample(appID: "org.example.Chess"))
            #expect(try store.deleteAuthorization(user: "alice", appID: "org.example.Paint"))
            #expect(try store.deleteAuthorization(user: "alice", appID: "org.example.Paint") == false)
            #expect(try store.authorizations() == [.sample(appID: "org.example.Chess")])
        }
    }

    @Test("delete with audit removes the record and appends the event; a failing event keeps the record")
    func deleteWithAudit() throws {
        try withStore { store, _ throws in
            try store.save(.sample())
            let revoke = AuditEvent.sample(actor: AuditEvent.rootActor, action: .revoke)
            #expect(throws: StoreError.self) {
                try store.deleteAuthorization(user: "alice", appID: "org.example.Paint", audit: .sample(outcome: ""))
            }
            #expect(try store.authorizations() == [.sample()])
            #expect(try store.auditEvents() == [])

            #expect(try store.deleteAuthorization(user: "alice", appID: "org.example.Paint", audit: revoke))
            #expect(try store.authorizations() == [])
            #expect(try store.auditEvents().map(\.action) == [.revoke])
        }
    }

    @Test("the list is sorted by user then app, and filters by user")
    func listing() throws {
        try withStore { store, _ throws in
            let records: [AuthorizationRecord] = [
                .sample(user: "carol", appID: "b"), .sample(user: "alice", appID: "z"),
                .sample(user: "alice", appID: "a"), .sample(user: "bob", appID: "m"),
            ]
            for record in records { try store.save(record) }
            #expect(try store.authorizations().map { "\($0.user)/\($0.appID)" } == ["alice/a", "alice/z", "bob/m", "carol/b"])
            #expect(try store.authorizations(user: "alice").map(\.appID) == ["a", "z"])
            #expect(try store.authorizations(user: "nobody") == [])
        }
    }

    @Test("an empty user or app ID is refused by the schema")
    func emptyKeyRefused() throws {
        try withStore { store, _ throws in
            for record in [AuthorizationRecord.sample(user: ""), .sample(appID: "")] {
                let error = #expect(throws: StoreError.self) { try store.save(record) }
                #expect(error?.sqliteError?.extendedCode == .constraintCheck)
            }
            #expect(try store.authorizations() == [])
        }
    }

    @Test("an authorization and its audit event are saved together")
    func saveWithAudit() throws {
        try withStore { store, _ throws in
            let id = try store.save(.sample(), audit: .sample())
            #expect(try store.authorizations() == [.sample()])
            var expected = AuditEvent.sample()
            expected.id = id
            #expect(try store.auditEvents() == [expected])
        }
    }

    @Test("when the audit insert fails, the authorization change is rolled back too")
    func saveWithAuditIsAtomic() throws {
        try withStore { store, _ throws in
            try store.save(.sample(status: .approved), audit: .sample())
            // An empty actor violates a CHECK on the audit table: the second statement fails.
            let badEvent = AuditEvent.sample(actor: "", action: .revoke)
            let error = #expect(throws: StoreError.self) {
                try store.save(.sample(status: .notDetermined, approvedBy: nil), audit: badEvent)
            }
            guard case .sqlite(store.path, let sqlite)? = error else {
                Issue.record("expected a SQLite error, got \(String(describing: error))")
                return
            }
            #expect(sqlite.extendedCode == .constraintCheck)
            #expect(sqlite.message == "CHECK constraint failed: actor <> ''")
            #expect(try store.authorization(user: "alice", appID: "org.example.Paint")?.status == .approved)
            #expect(try store.auditEvents().count == 1)

            #expect(throws: StoreError.self) {
                try store.save(.sample(appID: "org.example.New"), audit: badEvent)
            }
            #expect(try store.authorization(user: "alice", appID: "org.example.New") == nil)
            #expect(try store.auditEvents().count == 1)
        }
    }

    static let hostileTexts = [
        "O'Brien",
        "'; DROP TABLE authorizations; --",
        "\"); DELETE FROM audit; --",
        "?1 ?2 :name @name $name",
        "%s%n%x",
        "Zoë 🧒🏽 日本語 עברית",
        "\u{202E}evil",
        "nul\u{0}inside",
        "line\nbreak\ttab\r",
        " padded ",
        String(repeating: "long-", count: 40_000),
    ]

    @Test("hostile strings are stored as data and round-trip unchanged", arguments: hostileTexts)
    func hostileStrings(_ text: String) throws {
        try withStore { store, _ throws in
            let record = AuthorizationRecord(
                user: text, uid: 1001, appID: text, member: .child, status: .approved, approvedBy: text,
                updatedAt: UnixTime(seconds: 1_700_000_000), appPath: text)
            let event = AuditEvent(at: UnixTime(seconds: 1_700_000_000), actor: text, action: AuditAction(rawValue: text),
                                   user: text, appID: text, member: .child, outcome: AuditOutcome(rawValue: text), detail: text)
            let id = try store.save(record, audit: event)
            #expect(try store.authorization(user: text, appID: text) == record)
            #expect(try store.authorizations() == [record])
            #expect(try store.authorizations(user: text) == [record])
            var stored = event
            stored.id = id
            #expect(try store.auditEvents(user: text) == [stored])
            // Nothing was dropped or deleted by the text.
            #expect(try store.auditEvents().count == 1)
            #expect(try store.integrityCheck() == ["ok"])
        }
    }
}
