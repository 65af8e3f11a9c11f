import FamilyConfiguration
import FamilyControlsModel
import Foundation
@testable import GuardKit
import GuardProtocol
import PAM
import SystemKit
import Testing
@testable import GuardPolicy

/// The policy's rules, run in the test process without root: a scripted app
/// at the other end of each request, a scripted PAM, a lock that only
/// remembers, a store in a temporary directory, and the system's own
/// `daemon` (a child), `bin` (their guardian) and `nobody` (an adult).
@Suite struct AuthorizationPolicyTests {
    private func failure(_ body: () throws(GuardFailure) -> some Any) -> GuardFailure? {
        do throws(GuardFailure) {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    // MARK: In the app's session

    @Test func anIndividualApprovesInTheirSession() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.adult)
            let channel = ScriptedChannel(alert: .allow)
            let status = try fixture.policy.request(.individual, from: caller, over: channel)
            #expect(status == .approved)
            #expect(try fixture.current(caller)?.status == .approved)
            #expect(try fixture.current(caller)?.approvedBy == Accounts.adult)
            let pam = fixture.authenticator.requests
            #expect(pam.map(\.user) == [Accounts.adult])
            #expect(pam.map(\.service) == ["familycontrols-individual"])
            #expect(pam.first?.requestingUser == nil)
            #expect(channel.shown(.alert) == ["Allow “Paint” to provide parental controls for you (nobody)?"])
            #expect(fixture.locker.locked == 0, "an individual's app is never locked")
        }
    }

    @Test func aGuardianApprovesInTheChildsSessionWhereAllowed() throws {
        try withPolicy(PolicyFixture.configuration(inSession: true)) { fixture in
            let caller = try fixture.caller(Accounts.child)
            let channel = ScriptedChannel(alert: .allow, names: [Accounts.guardian])
            #expect(try fixture.policy.request(.child, from: caller, over: channel) == .approved)
            #expect(try fixture.current(caller)?.approvedBy == Accounts.guardian)
            #expect(fixture.locker.isLocked(Accounts.child, PolicyFixture.appID), "locked before it was recorded")
            let pam = try #require(fixture.authenticator.requests.first)
            #expect(pam.user == Accounts.guardian)
            #expect(pam.requestingUser == Accounts.child)
            #expect(pam.service == "familycontrols-guardian")
        }
    }

    @Test func aNameThatIsNotAGuardiansIsRefusedAndAskedAgain() throws {
        try withPolicy(PolicyFixture.configuration(inSession: true)) { fixture in
            let caller = try fixture.caller(Accounts.child)
            let channel = ScriptedChannel(alert: .allow, names: [Accounts.adult, "no-such-user-here", Accounts.guardian])
            #expect(try fixture.policy.request(.child, from: caller, over: channel) == .approved)
            #expect(channel.shown(.error) == ["Sorry, nobody is not a parent or guardian of daemon.",
                                              "Sorry, that is not a parent or guardian of daemon."])
            #expect(fixture.authenticator.requests.map(\.user) == [Accounts.guardian], "PAM ran for the guardian only")
            let refusals = try fixture.audit().filter { $0.outcome == .refused }.compactMap(\.detail)
            #expect(refusals == ["nobody is not a guardian of daemon (attempt 1)",
                                 "an unknown user is not a guardian of daemon (attempt 2)"])
        }
    }

    @Test func dontAllowDeniesWithoutAuthenticating() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.adult)
            let error = failure { () throws(GuardFailure) in
                try fixture.policy.request(.individual, from: caller, over: ScriptedChannel(alert: .refuse))
            }
            #expect(error?.kind == .familyControls(.authorizationCanceled))
            #expect(error?.resultingStatus == .denied)
            #expect(error?.message == "Paint was not allowed to provide parental controls")
            #expect(try fixture.current(caller)?.status == .denied)
            #expect(fixture.authenticator.requests.isEmpty)
        }
    }

    @Test func dontAllowHasNoEffectOnAnApprovalMadeMeanwhile() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.adult)
            // An administrator approves while the alert is open, then the person says Don't Allow.
            let channel = ScriptedChannel { prompt in
                if prompt.kind == .alert { try? fixture.record(.approved, .individual, for: caller) }
                return .answer(AlertResponse.refuse.wire)
            }
            #expect(try fixture.policy.request(.individual, from: caller, over: channel) == .approved)
            #expect(try fixture.current(caller)?.status == .approved)
            #expect(try fixture.audit().last?.outcome == .noEffect)
        }
    }

    @Test func anApprovalAlreadyRecordedIsAnsweredWithoutAPrompt() throws {
        try withPolicy { fixture in
            let adult = try fixture.caller(Accounts.adult)
            try fixture.record(.approved, .individual, for: adult)
            let channel = ScriptedChannel(alert: .refuse)
            #expect(try fixture.policy.request(.individual, from: adult, over: channel) == .approved)
            let child = try fixture.caller(Accounts.child, folder: "Paint-child")
            try fixture.record(.approved, .child, for: child)
            #expect(try fixture.policy.request(.child, from: child, over: channel) == .approved)
            #expect(channel.prompts.isEmpty)
            #expect(fixture.authenticator.requests.isEmpty)
        }
    }

    @Test func anApprovalInAnotherFolderConflicts() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.child)
            let elsewhere = try fixture.caller(Accounts.child, folder: "Elsewhere")
            try fixture.record(.approved, .child, for: caller, identity: elsewhere.app.directoryIdentity)
            let channel = ScriptedChannel(alert: .allow)
            let error = failure { () throws(GuardFailure) in try fixture.policy.request(.child, from: caller, over: channel) }
            #expect(error?.kind == .familyControls(.authorizationConflict))
            #expect(error?.message.hasPrefix("org.example.Paint is already approved for daemon in another folder") == true)
            #expect(channel.prompts.isEmpty)
        }
    }

    @Test func anIndividualRequestConflictsWithAChildsApproval() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.adult)
            try fixture.record(.approved, .child, for: caller)
            let error = failure { () throws(GuardFailure) in
                try fixture.policy.request(.individual, from: caller, over: ScriptedChannel(alert: .allow))
            }
            #expect(error == GuardFailure(.authorizationConflict,
                                          "org.example.Paint is already approved for nobody as a child; revoke it first"))
        }
    }

    @Test func requestsOfTheWrongKindAreRefusedBeforeAnyPrompt() throws {
        try withPolicy { fixture in
            let channel = ScriptedChannel(alert: .allow)
            let adultCaller = try fixture.caller(Accounts.adult)
            let childCaller = try fixture.caller(Accounts.child)
            let adult = failure { () throws(GuardFailure) in
                try fixture.policy.request(.child, from: adultCaller, over: channel)
            }
            #expect(adult?.kind == .familyControls(.invalidAccountType))
            #expect(adult?.message == "nobody is not a child in the family configuration; ask an administrator to add them to Children=")
            let child = failure { () throws(GuardFailure) in
                try fixture.policy.request(.individual, from: childCaller, over: channel)
            }
            #expect(child?.kind == .familyControls(.invalidAccountType))
            #expect(child?.message == "daemon is a child in the family: a parent or guardian must approve (request .child)")
            #expect(channel.prompts.isEmpty)
        }
    }

    @Test func failedAttemptsEndAtMaxAttemptsAndSlowTheNextRequest() throws {
        try withPolicy(pam: [.authenticationFailed]) { fixture in
            let caller = try fixture.caller(Accounts.adult)
            let first = ScriptedChannel(alert: .allow)
            let error = failure { () throws(GuardFailure) in try fixture.policy.request(.individual, from: caller, over: first) }
            #expect(error == .canceled("3 incorrect authentication attempts"))
            #expect(fixture.authenticator.requests.count == 3)
            #expect(first.shown(.error) == ["Sorry, try again.", "Sorry, try again."])
            #expect(try fixture.audit().last?.outcome == .tooManyFailures)

            // The next request waits out the delay before any alert or PAM.
            let second = ScriptedChannel(alert: .allow)
            let slowed = failure { () throws(GuardFailure) in try fixture.policy.request(.individual, from: caller, over: second) }
            #expect(slowed?.message.hasPrefix("Too many failed attempts. Try again in ") == true)
            #expect(second.shown(.alert).isEmpty)
            #expect(fixture.authenticator.requests.count == 3)
        }
    }

    @Test func aCorrectPasswordAfterAFailureApproves() throws {
        try withPolicy(pam: [.authenticationFailed, nil]) { fixture in
            let caller = try fixture.caller(Accounts.adult)
            let channel = ScriptedChannel(alert: .allow)
            #expect(try fixture.policy.request(.individual, from: caller, over: channel) == .approved)
            #expect(fixture.authenticator.requests.count == 2)
            #expect(channel.shown(.error) == ["Sorry, try again."])
        }
    }

    // MARK: At a guardian's desk

    @Test func aGuardianApprovesFromTheirOwnSession() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.child)
            let app = ScriptedChannel(alert: .allow)
            let request = Background { () throws(GuardFailure) in try fixture.policy.request(.child, from: caller, over: app) }
            let waiting = try fixture.waitingRequest()
            #expect(waiting.purpose == .approve)
            let view = try fixture.policy.decide(waiting.id, approve: true, requester: try Accounts.account(Accounts.guardian),
                                                 session: nil, over: ScriptedChannel { _ in .hangUp })
            #expect(view?.record.status == .approved)
            #expect(try request.result().get() == .approved)
            #expect(fixture.locker.isLocked(Accounts.child, PolicyFixture.appID))
            #expect(fixture.authenticator.requests.map(\.user) == [Accounts.guardian])
            #expect(app.shown(.pending).count == 1)
        }
    }

    @Test func aGuardianDeniesFromTheirOwnSession() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.child)
            let request = Background { () throws(GuardFailure) in
                try fixture.policy.request(.child, from: caller, over: ScriptedChannel(alert: .allow))
            }
            let waiting = try fixture.waitingRequest()
            _ = try fixture.policy.decide(waiting.id, approve: false, requester: try Accounts.account(Accounts.guardian),
                                          session: nil, over: ScriptedChannel { _ in .hangUp })
            guard case .failure(let error) = try request.result() else {
                Issue.record("a denied request succeeded")
                return
            }
            #expect(error.message == "Paint was not allowed to provide parental controls (by bin)")
            #expect(error.resultingStatus == .denied)
            #expect(try fixture.current(caller)?.status == .denied)
            #expect(fixture.locker.locked == 0)
        }
    }

    @Test func aRequestNoGuardianDecidesExpires() throws {
        try withPolicy(PolicyFixture.configuration(pendingTimeout: .seconds(1))) { fixture in
            let caller = try fixture.caller(Accounts.child)
            let error = failure { () throws(GuardFailure) in
                try fixture.policy.request(.child, from: caller, over: ScriptedChannel(alert: .allow))
            }
            #expect(error == .canceled("no parent or guardian decided within 1 second; ask again"))
            #expect(try fixture.current(caller) == nil)
            #expect(try fixture.audit().last?.outcome == .expired)
        }
    }

    @Test func anAppThatHangsUpCancelsItsWaitingRequest() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.child)
            let app = ScriptedChannel(alert: .allow)
            let request = Background { () throws(GuardFailure) in try fixture.policy.request(.child, from: caller, over: app) }
            let waiting = try fixture.waitingRequest()
            app.goAway()
            guard case .failure(let error) = try request.result() else {
                Issue.record("a request whose app hung up succeeded")
                return
            }
            #expect(error == .canceled("the request was canceled"))
            #expect(try fixture.audit().last?.outcome == .canceled)
            #expect(fixture.policy.pendingRequests(for: try Accounts.account("root")).isEmpty)
            let guardian = try Accounts.account(Accounts.guardian)
            let late = failure { () throws(GuardFailure) in
                try fixture.policy.decide(waiting.id, approve: true, requester: guardian,
                                          session: nil, over: ScriptedChannel { _ in .hangUp })
            }
            #expect(late?.kind == .notFound)
            #expect(fixture.locker.locked == 0)
        }
    }

    @Test func aWrongGuardianPasswordLeavesTheRequestWaiting() throws {
        try withPolicy(pam: [.authenticationFailed]) { fixture in
            let caller = try fixture.caller(Accounts.child)
            let app = ScriptedChannel(alert: .allow)
            let request = Background { () throws(GuardFailure) in try fixture.policy.request(.child, from: caller, over: app) }
            let waiting = try fixture.waitingRequest()
            let guardianTerminal = ScriptedChannel { _ in .hangUp }
            let guardian = try Accounts.account(Accounts.guardian)
            let error = failure { () throws(GuardFailure) in
                try fixture.policy.decide(waiting.id, approve: true, requester: guardian,
                                          session: nil, over: guardianTerminal)
            }
            #expect(error == .canceled("3 incorrect authentication attempts"))
            #expect(guardianTerminal.shown(.error) == ["Sorry, try again.", "Sorry, try again."])
            #expect(waiting.ending == nil, "the request still waits")
            app.goAway()
            _ = try request.result()
            #expect(fixture.locker.locked == 0)
        }
    }

    @Test func aGuardiansPasswordDuringADirectoryOutageIsNotCountedAsWrong() throws {
        let outage = Array(repeating: PAMError.Reason?.some(.directoryUnavailable), count: 5)
        try withPolicy(pam: outage + [nil]) { fixture in
            let caller = try fixture.caller(Accounts.child)
            let app = ScriptedChannel(alert: .allow)
            let request = Background { () throws(GuardFailure) in try fixture.policy.request(.child, from: caller, over: app) }
            let waiting = try fixture.waitingRequest()
            let guardian = try Accounts.account(Accounts.guardian)
            // More outages than MaxAttempts: none counts toward the back-off.
            for _ in 0..<outage.count {
                let terminal = ScriptedChannel { _ in .hangUp }
                let error = failure { () throws(GuardFailure) in
                    try fixture.policy.decide(waiting.id, approve: true, requester: guardian, session: nil, over: terminal)
                }
                #expect(error?.error == .unavailable)
                #expect(error?.message.contains("directory cannot be reached") == true, "\(String(describing: error))")
                #expect(terminal.shown(.error).isEmpty, "no \"Sorry, try again.\"")
                #expect(try fixture.audit().last?.outcome == .directoryUnavailable)
            }
            #expect(fixture.authenticator.requests.count == outage.count, "one PAM attempt per outage, not MaxAttempts")
            #expect(waiting.ending == nil, "the request still waits")
            // The directory is back: the same guardian approves at once, with no wait.
            let view = try fixture.policy.decide(waiting.id, approve: true, requester: guardian,
                                                 session: nil, over: ScriptedChannel { _ in .hangUp })
            #expect(view?.record.status == .approved)
            #expect(try request.result().get() == .approved)
            #expect(try fixture.audit().contains { $0.outcome == .authenticationFailed } == false)
        }
    }

    @Test func anIndividualDuringADirectoryOutageIsToldSoAndNotSlowed() throws {
        try withPolicy(pam: [.directoryUnavailable, .directoryUnavailable, .directoryUnavailable, .directoryUnavailable, nil]) { fixture in
            let caller = try fixture.caller(Accounts.adult)
            for _ in 0..<4 {
                let channel = ScriptedChannel(alert: .allow)
                let error = failure { () throws(GuardFailure) in try fixture.policy.request(.individual, from: caller, over: channel) }
                #expect(error?.error == .unavailable)
                #expect(error?.message.contains("directory cannot be reached") == true)
                #expect(channel.shown(.error).isEmpty)
                #expect(try fixture.audit().last?.outcome == .directoryUnavailable)
            }
            #expect(try fixture.policy.request(.individual, from: caller, over: ScriptedChannel(alert: .allow)) == .approved)
        }
    }

    // MARK: The app's revoke

    @Test func aRevokeOfNothingApprovedHasNoEffect() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.child)
            try fixture.record(.denied, .child, for: caller)
            let channel = ScriptedChannel(alert: .allow)
            try fixture.policy.revoke(from: caller, over: channel)
            #expect(channel.prompts.isEmpty)
            #expect(try fixture.current(caller)?.status == .denied)
            #expect(try fixture.audit().last?.outcome == .noEffect)
        }
    }

    @Test func anIndividualsApprovalIsRevokedAtOnce() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.adult)
            try fixture.record(.approved, .individual, for: caller)
            let channel = ScriptedChannel(alert: .refuse)
            try fixture.policy.revoke(from: caller, over: channel)
            #expect(channel.prompts.isEmpty)
            #expect(try fixture.current(caller) == nil)
        }
    }

    @Test func aChildsApprovalIsLiftedOnlyByAGuardian() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.child)
            try fixture.record(.approved, .child, for: caller)
            let revoke = Background { () throws(GuardFailure) in
                try fixture.policy.revoke(from: caller, over: ScriptedChannel(alert: .allow))
            }
            let waiting = try fixture.waitingRequest()
            #expect(waiting.purpose == .revoke)
            #expect(try fixture.current(caller)?.status == .approved, "the app's word alone lifts nothing")
            _ = try fixture.policy.decide(waiting.id, approve: true, requester: try Accounts.account(Accounts.guardian),
                                          session: nil, over: ScriptedChannel { _ in .hangUp })
            try revoke.result().get()
            #expect(try fixture.current(caller) == nil)
        }
    }

    @Test func dontAllowKeepsAChildsApproval() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.child)
            try fixture.record(.approved, .child, for: caller)
            let error = failure { () throws(GuardFailure) in
                try fixture.policy.revoke(from: caller, over: ScriptedChannel(alert: .refuse))
            }
            #expect(error == .canceled("the approval of Paint stays"))
            #expect(try fixture.current(caller)?.status == .approved)
        }
    }

    @Test func aRevokeFromAnotherFoldersCopyIsRefused() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.child)
            let elsewhere = try fixture.caller(Accounts.child, folder: "Elsewhere")
            try fixture.record(.approved, .child, for: caller, identity: elsewhere.app.directoryIdentity)
            let error = failure { () throws(GuardFailure) in
                try fixture.policy.revoke(from: caller, over: ScriptedChannel(alert: .allow))
            }
            #expect(error?.kind == .familyControls(.authorizationConflict))
            #expect(try fixture.current(caller)?.status == .approved)
        }
    }

    // MARK: The one turn per app

    @Test func anAdministratorsSaveNeverWaitsForAPerson() throws {
        try withPolicy { fixture in
            let caller = try fixture.caller(Accounts.child)
            try fixture.record(.denied, .child, for: caller)
            // The child's alert stays open until the administrator's revoke is done.
            let adminDone = DispatchSemaphore(value: 0)
            let alertOpen = DispatchSemaphore(value: 0)
            let app = ScriptedChannel { prompt in
                guard prompt.kind == .alert else { return .hangUp }
                alertOpen.signal()
                return adminDone.wait(timeout: .now() + 10) == .success ? .answer(AlertResponse.refuse.wire) : .timeOut
            }
            let request = Background { () throws(GuardFailure) in try fixture.policy.request(.child, from: caller, over: app) }
            #expect(alertOpen.wait(timeout: .now() + 10) == .success)
            let root = try Accounts.account("root")
            let admin = Background { () throws(GuardFailure) in
                try fixture.policy.revoke(user: Accounts.child, appID: PolicyFixture.appID, requester: root,
                                          proof: GuardianProof(session: nil, channel: nil))
            }
            let adminResult = try admin.result(within: .seconds(5))
            adminDone.signal()
            try adminResult.get()
            guard case .failure(let error) = try request.result() else {
                Issue.record("Don't Allow approved")
                return
            }
            #expect(error.resultingStatus == .denied, "the alert answered after the administrator's save")
        }
    }
}
