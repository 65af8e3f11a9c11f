import FamilyControlsModel
import GuardProtocol

/// The rules of an app's request and an app's revoke that every Guard
/// follows, the real one (`GuardKit`) and the in-memory one apps test with
/// (`FamilyControlsTesting`): who may ask, what a request or revoke finds
/// when it starts, and what each answer leads to.
///
/// Pure: no store, no users, no clock, no threads. Each Guard reads its own
/// state into ``RecordedAuthorization`` and ``AskingApp``, asks the rules,
/// and carries out the verdict; a refusal carries the `FamilyControlsError`
/// case and the message, so both Guards say the same words.
package enum AuthorizationRules {
    /// What the app asked for.
    package enum Purpose: Hashable, Sendable {
        /// `requestAuthorization(for:)`.
        case request
        /// `revokeAuthorization`.
        case revoke
    }

    /// Whether a parent or guardian's one-time code, typed at the child's
    /// screen, may decide `purpose`. It may approve a request; it never lifts
    /// an approval: a code the child watched being typed (or caught in an
    /// alert of its own) is still valid for a few seconds, and what lowers a
    /// child's protection stays with the guardian's own session (`familyctl`,
    /// the desktop agent, `-H`).
    package static func oneTimeCodeMayDecide(_ purpose: Purpose) -> Bool {
        switch purpose {
        case .request: true
        case .revoke: false
        }
    }

    /// Whether `app`'s user may ask as `member`: a child request only from a
    /// child in the family, an individual one only from someone who is not.
    /// - Returns: the refusal, or nil when the request may go on.
    package static func admission(_ member: FamilyControlsMember, isChild: Bool, app: AskingApp) -> GuardFailure? {
        switch member {
        case .child where !isChild:
            GuardFailure(.invalidAccountType,
                "\(app.user) is not a child in the family configuration; ask an administrator to add them to Children=")
        case .individual where isChild:
            GuardFailure(.invalidAccountType,
                "\(app.user) is a child in the family: a parent or guardian must approve (request .child)")
        default:
            nil
        }
    }

    /// What a request as `member` finds when it starts, given what is recorded now.
    package static func requestStart(_ member: FamilyControlsMember, current: RecordedAuthorization?,
                                     app: AskingApp) -> RequestStart {
        guard let current, current.status == .approved else { return .ask }
        switch (member, current.member) {
        case (.child, .child):
            // Approved for this very folder: at once, with no prompt.
            if current.isThisFolder { return .answerApproved }
            return .refuse(GuardFailure(.authorizationConflict,
                "\(app.appID) is already approved for \(app.user) in another folder (\(current.folder)); "
                + "a parent or guardian must revoke that approval first"))
        case (.child, .individual):
            return .ask
        case (.individual, .individual):
            return .answerApproved
        case (.individual, .child):
            return .refuse(GuardFailure(.authorizationConflict,
                "\(app.appID) is already approved for \(app.user) as a child; revoke it first"))
        }
    }

    /// What an app's revoke finds when it starts, given what is recorded now.
    package static func revokeStart(current: RecordedAuthorization?, app: AskingApp) -> RevokeStart {
        guard let current, current.status == .approved else { return .noEffect }
        guard current.member == .child else { return .revokeAtOnce }
        guard current.isThisFolder else {
            return .refuse(GuardFailure(.authorizationConflict, "\(app.appID) is approved for \(app.user) in another "
                + "folder (\(current.folder)); only that app may ask to lift it"))
        }
        return .askGuardian
    }

    /// A revoke that needs no guardian, checked again just before it is
    /// saved: a child's approval made meanwhile is not the app's to lift.
    /// - Returns: the refusal, or nil when the revoke may be saved.
    package static func revokeWithoutGuardian(now: RecordedAuthorization?, app: AskingApp) -> GuardFailure? {
        guard let now, now.status == .approved, now.member == .child else { return nil }
        return GuardFailure(.authorizationCanceled,
            "\(app.displayName) was approved meanwhile; lifting that takes a parent or guardian")
    }

    /// "Don't Allow" at the alert, given what is recorded when it is saved.
    package static func dontAllow(_ purpose: Purpose, now: RecordedAuthorization?, app: AskingApp) -> DontAllow {
        switch purpose {
        case .request:
            // It never undoes an approval an administrator or guardian made meanwhile.
            if let now, now.status == .approved { return .approvedMeanwhile(by: now.approvedBy) }
            return .deny(GuardFailure(.authorizationCanceled, "\(app.displayName) was not allowed to provide parental controls",
                                 resultingStatus: .denied))
        case .revoke:
            return .keepApproval(GuardFailure(.authorizationCanceled, "the approval of \(app.displayName) stays"))
        }
    }

    /// A parent's or guardian's decision, from their own session or in the app.
    /// - Returns: nil when the request or revoke succeeded (the decision
    ///   carried out), else the refusal the app hears.
    package static func guardianDecided(_ purpose: Purpose, approve: Bool, by guardian: String,
                                        app: AskingApp) -> GuardFailure? {
        guard !approve else { return nil }
        switch purpose {
        case .request:
            return GuardFailure(.authorizationCanceled,
                           "\(app.displayName) was not allowed to provide parental controls (by \(guardian))",
                           resultingStatus: .denied)
        case .revoke:
            return GuardFailure(.authorizationCanceled, "the approval of \(app.displayName) stays (decided by \(guardian))")
        }
    }

    /// The app canceled (or went away) or a prompt timed out: nothing changes.
    package static func ended(timedOut: Bool) -> GuardFailure {
        GuardFailure(.authorizationCanceled, "the request was \(timedOut ? "timed out" : "canceled")")
    }

    /// No parent or guardian decided in time (`waited`, spoken: "15 minutes").
    package static func expired(after waited: String) -> GuardFailure {
        GuardFailure(.authorizationCanceled, "no parent or guardian decided within \(waited); ask again")
    }
}

/// What the rules need of the app that asks.
package struct AskingApp: Hashable, Sendable {
    /// The user's account name ("the user" where a Guard has no names).
    package var user: String
    package var appID: String
    /// The app's name as shown in the alert.
    package var displayName: String

    package init(user: String, appID: String, displayName: String) {
        self.user = user
        self.appID = appID
        self.displayName = displayName
    }
}

/// What the rules need of the authorization recorded for the app.
package struct RecordedAuthorization: Hashable, Sendable {
    package var status: AuthorizationStatus
    package var member: FamilyControlsMember
    /// Who approved it, when someone did.
    package var approvedBy: String?
    /// Whether it was recorded for the very folder the app asks from.
    package var isThisFolder: Bool
    /// The folder it was recorded for, as shown in a message.
    package var folder: String

    package init(status: AuthorizationStatus, member: FamilyControlsMember, approvedBy: String? = nil,
                 isThisFolder: Bool = true, folder: String = "") {
        self.status = status
        self.member = member
        self.approvedBy = approvedBy
        self.isThisFolder = isThisFolder
        self.folder = folder
    }
}

/// What a request finds when it starts.
package enum RequestStart: Hashable, Sendable {
    /// Already approved as asked: answer `approved` at once, with no prompt.
    case answerApproved
    /// Ask: the alert, then a guardian or an authentication.
    case ask
    case refuse(GuardFailure)
}

/// What an app's revoke finds when it starts.
package enum RevokeStart: Hashable, Sendable {
    /// Nothing approved: the call completes and nothing changes.
    case noEffect
    /// An individual's approval: lifted at once, with no prompt.
    case revokeAtOnce
    /// A child's approval: lifted only once a parent or guardian decides.
    case askGuardian
    case refuse(GuardFailure)
}

/// What "Don't Allow" leads to.
package enum DontAllow: Hashable, Sendable {
    /// The request is denied: record `denied` and fail with the refusal.
    case deny(GuardFailure)
    /// Approved meanwhile by someone who may: the request answers `approved`
    /// and nothing is recorded.
    case approvedMeanwhile(by: String?)
    /// The revoke is refused; the approval stays.
    case keepApproval(GuardFailure)
}
