import GuardProtocol
import SystemKit
import Testing
import Varlink

@Suite("The types generated from the Guard's interface")
struct GeneratedTypesTests {
    @Test func anAuthorizationRoundTripsThroughJSONWithNullForAMissingApprover() throws {
        let authorization = Guard.Authorization(user: "kid", app: "org.example.App", member: .child, status: .approved,
                                                approvedBy: nil, updatedAt: 12.5, path: "/home/kid/App", lock: .locked)
        let object = authorization.object
        #expect(object["member"] == .string("child"))
        #expect(object["status"] == .string("approved"))
        #expect(object["approvedBy"] == .null)
        #expect(object.keys == ["user", "app", "name", "member", "status", "approvedBy", "updatedAt", "path", "lock",
                                "lockReason", "flatpak"])
        #expect(object["flatpak"] == .null)
        let text = JSONValue.object(object).description
        let parsed = try #require(try JSONValue(parsing: text).objectValue)
        #expect(try Guard.Authorization(parsed) == authorization)
    }

    @Test func aReplyLeavesOutItsNilOptionals() {
        let reply = Guard.RequestAuthorization.Reply(status: .denied)
        #expect(reply.object == ["status": .string("denied")])
        let prompt = Guard.RequestAuthorization.Reply(prompt: Guard.Prompt(id: 3, kind: .secret, message: "Password: "))
        // A type (Prompt) writes its nil optionals as null, as Authorization does.
        #expect(prompt.object == ["prompt": .object(["id": .int(3), "kind": .string("secret"), "message": .string("Password: "),
                                                     "guardianHere": .null])])
    }

    @Test func anEnumOutsideTheInterfaceIsRefusedNamingTheFieldAndTheCases() {
        #expect(throws: ProtocolDecodingError(path: "member", problem: .notOneOf(["child", "individual"]))) {
            try Guard.RequestAuthorization.Parameters(["member": .string("parent")])
        }
    }

    @Test func aMonitorsStateAndAFlatpakInstallationTravelAsInterfaceEnums() throws {
        let monitor: JSONObject = ["appID": .string("org.example.App"), "user": .string("kid"), "session": .string("c2"),
                                   "state": .string("running"), "pid": .int(7), "startedAt": .int(1), "restarts": .int(0)]
        #expect(try Guard.Monitor(monitor).state == .running)
        #expect(Guard.Monitor(appID: "a", user: "kid", session: "c2", state: .stopped, pid: 0, startedAt: 1,
                              restarts: 0).object["state"] == .string("stopped"))
        var paused = monitor
        paused["state"] = .string("paused")
        #expect(throws: ProtocolDecodingError(path: "state", problem: .notOneOf(["running", "waiting", "stopped"]))) {
            try Guard.Monitor(paused)
        }
        let app: JSONObject = ["id": .string("org.example.App"), "installation": .string("familycontrols"),
                               "arch": .string("x86_64"), "branch": .string("stable"), "commit": .string("c"),
                               "deployment": .string("/d")]
        #expect(try Guard.FlatpakApp(app).installation == .familycontrols)
        var elsewhere = app
        elsewhere["installation"] = .string("extra")
        #expect(throws: ProtocolDecodingError(path: "installation",
                                              problem: .notOneOf(["user", "system", "familycontrols"]))) {
            try Guard.FlatpakApp(elsewhere)
        }
    }

    @Test func aMissingFieldIsRefusedByName() {
        #expect(throws: ProtocolDecodingError(path: "approve", problem: .missing)) {
            try Guard.DecideRequest.Parameters(["id": .int(4)])
        }
    }

    @Test func aWrongTypedFieldIsRefusedWithWhatItMustBe() throws {
        let error = try #require(throws: ProtocolDecodingError.self) {
            try Guard.DecideRequest.Parameters(["id": .string("4"), "approve": .bool(true)])
        }
        #expect(error.field == "id")
        #expect(error.description == "field id must be a whole number")
    }

    @Test func aLockTravelsAsAnInterfaceEnumWithItsReasonBeside() throws {
        let unenforced = Guard.Authorization(user: "kid", app: "a", member: .child, status: .approved, updatedAt: 1, path: "/p",
                                             lock: .unenforced, lockReason: "ramfs holds no immutable attribute")
        #expect(unenforced.object["lock"] == .string("unenforced"))
        #expect(try Guard.Authorization(unenforced.object) == unenforced)
        var words = unenforced.object
        words["lock"] = .string("unenforced: ramfs holds no immutable attribute")
        #expect(throws: ProtocolDecodingError(path: "lock", problem: .notOneOf(Guard.LockState.allCases.map(\.rawValue)))) {
            try Guard.Authorization(words)
        }
    }

    @Test func aNestedFieldIsNamedByItsPath() throws {
        let row: JSONObject = ["user": .string("kid"), "app": .string("a"), "member": .string("child"),
                               "status": .string("maybe"), "approvedBy": .null, "updatedAt": .int(1),
                               "path": .string("/p"), "lock": .string("locked")]
        let error = try #require(throws: ProtocolDecodingError.self) {
            try Guard.ListAuthorizations.Reply(["authorizations": .array([.object(row)])])
        }
        #expect(error.path == "authorizations[0].status")
        #expect(error.field == "authorizations")
    }

    @Test func strictDecodingRefusesAFieldTheInterfaceDoesNotName() {
        #expect(throws: ProtocolDecodingError(path: "uid", problem: .unknownField)) {
            try Guard.ListAuthorizations.Parameters(["user": .null, "uid": .int(0)], strict: true)
        }
    }

    @Test func nullAndAbsentOptionalsAreBothNil() throws {
        #expect(try Guard.ListAuthorizations.Parameters(["user": .null]).user == nil)
        #expect(try Guard.ListAuthorizations.Parameters([:]).user == nil)
    }

    @Test func aFloatAcceptsAWholeNumber() throws {
        #expect(try Guard.ReadAudit.Parameters(["since": .int(90)]).since == 90)
    }

    @Test func theAnswersResponseTravelsAsASecret() throws {
        let parameters = try Guard.Answer.Parameters(["id": .int(1), "response": .string("hunter2")])
        #expect(parameters.response?.count == 7)
        let encoded = Guard.Answer.Parameters(id: 1, response: SecretBytes("pw")).object
        guard case .secret? = encoded["response"] else {
            Issue.record("response encoded as \(encoded)")
            return
        }
    }

    @Test func methodsThatStreamRequireMore() {
        #expect(Guard.Subscribe.requiresMore)
        #expect(Guard.RequestAuthorization.requiresMore)
        #expect(Guard.RevokeAuthorization.requiresMore)
        #expect(Guard.DecideRequest.requiresMore)
        #expect(Guard.WatchRequests.requiresMore)
        #expect(!Guard.GetStatus.requiresMore)
        #expect(!Guard.SetStatus.requiresMore)
        #expect(Guard.GetStatus.method == "org.familycontrols.guard.GetStatus")
    }

    @Test func anErrorRoundTripsByItsQualifiedName() throws {
        let error = GuardError.authorizationCanceled(message: "no", status: .denied)
        #expect(error.name == "org.familycontrols.guard.AuthorizationCanceled")
        #expect(error.parameters == ["message": .string("no"), "status": .string("denied")])
        #expect(try GuardError(name: error.name, parameters: error.parameters) == error)
        #expect(try GuardError(name: "org.example.Other", parameters: [:]) == nil)
        #expect(GuardError.notFound(message: "gone").parameters == ["message": .string("gone")])
    }
}
