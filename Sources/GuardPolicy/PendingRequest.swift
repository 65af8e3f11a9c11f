import FamilyControlsModel
import GuardProtocol
import Synchronization
import SystemKit
import UpdateSignature
import GuardIdentity

/// A child's request waiting for a parent or guardian to decide it from
/// their own session (`familyctl approve ID`): to approve the app, or to lift
/// its approval.
///
/// Held in memory only, with the app directory the Guard identified: the
/// request lives as long as the app's connection, which a restart ends.
package final class PendingRequest: Sendable {
    package enum Purpose: String, Hashable, Sendable {
        /// Approve the app for the child.
        case approve
        /// Lift the child's approval (the app asked to revoke).
        case revoke
        /// Swap in a new version of the approved app that its key did not sign.
        case update
        /// Let time limits the approved app set for the child take effect, looser than those in force.
        case limits
        /// Give the child more session time today.
        case time
    }

    /// What a `limits` or `time` request asks, and how a guardian's decision
    /// is carried out: made by the room that keeps time limits, which the
    /// desk knows nothing of.
    package struct Proposal: Sendable {
        /// What the guardian is shown: the settings asked for, or the minutes and the child's reason.
        package let summary: String
        /// The settings asked for, as `familyctl requests` shows them (`limits`).
        package let limits: String?
        /// The minutes asked for (`time`), the default of `approve --minutes`.
        package let minutes: Int?
        /// The child's reason, as they typed it, cut and made safe to show.
        package let reason: String?
        /// Carries out an approval by `guardian`, given `minutes` for a `time` request.
        package let approve: @Sendable (_ guardian: String, _ minutes: Int?) throws(GuardFailure) -> Void
        /// Records a refusal by `guardian`.
        package let deny: @Sendable (_ guardian: String) -> Void

        package init(summary: String, limits: String? = nil, minutes: Int? = nil, reason: String? = nil,
                     approve: @escaping @Sendable (_ guardian: String, _ minutes: Int?) throws(GuardFailure) -> Void,
                     deny: @escaping @Sendable (_ guardian: String) -> Void) {
            self.summary = summary
            self.limits = limits
            self.minutes = minutes
            self.reason = reason
            self.approve = approve
            self.deny = deny
        }
    }

    /// The new version an `update` request would let in.
    package struct Update: Sendable {
        enum Change: Sendable {
            /// A version staged beside an app root's folder, locked while it waits, to swap in.
            case staged(StagedUpdate)
            /// The commit the Guard's Flatpak installation now deploys for a
            /// moved app (or its runtime), from another remote or older than
            /// the approved one, for the approval to move to from `from`, the
            /// approval as it stood.
            case flatpak(FlatpakApproval, from: FlatpakApproval)
        }

        /// An update key that changes: the one the approval trusts now
        /// (`from`) and the one the new version declares (`to`), nil for
        /// none. Shown to the guardian; once they approve, `to` is trusted.
        package struct KeyChange: Sendable, Equatable {
            package let from: UpdateKey?
            package let to: UpdateKey?
        }

        let change: Change
        /// The approved version and the new one, as the guardian sees them.
        package let from: String
        package let to: String
        /// For a staged version: the update key it declares, which the
        /// approval trusts once a guardian lets it in, and its comparable version.
        var nextKey: UpdateKey? = nil
        var version: String? = nil
        /// The update key's change, when the new version declares another.
        package var keyChange: KeyChange? = nil
        /// Why a signed version still needs the guardian, when it does
        /// (not newer than every version the approval has had).
        package var note: String? = nil

        /// The key's change in a sentence, nil when it does not change.
        var keyChangeText: String? {
            guard let keyChange else { return nil }
            return "the update key changes from \(UpdateRefusal.shown(keyChange.from)) to \(UpdateRefusal.shown(keyChange.to))"
                + (keyChange.to == nil ? "" : ", and new versions it signs will then be swapped in without asking you")
        }
    }

    /// How a request ended.
    package enum Outcome: Sendable {
        case approved(by: String)
        case denied(by: String)
        /// The guardian said yes, but the Guard could not carry it out.
        case failed(GuardFailure)
        case canceled(String)
        case expired
    }

    package let id: Int64
    package let purpose: Purpose
    package let caller: Caller
    /// What an `update` request would swap in; nil for the other kinds.
    package let update: Update?
    /// For an `approve` request of a per-user Flatpak app: the commit and
    /// the remote it would be approved at (its name, URL, keys, and whether
    /// the site trusts it), as the guardian reads it.
    package let source: String?
    /// What a `limits` or `time` request asks; nil for the other kinds.
    package let proposal: Proposal?
    package let created: UnixTime
    package let expires: UnixTime
    let deadline: MonotonicInstant
    private let outcome = Mutex<Outcome?>(nil)
    private let signal = ConditionSignal()

    init(id: Int64, purpose: Purpose, caller: Caller, update: Update? = nil, source: String? = nil,
         proposal: Proposal? = nil, timeout: Duration) {
        self.id = id
        self.proposal = proposal
        self.purpose = purpose
        self.caller = caller
        self.update = update
        self.source = source
        created = .now
        expires = created.adding(timeout)
        deadline = .now.advanced(by: timeout)
    }

    /// The child's account name.
    package var user: String { caller.account.name }
    /// The app's ID and display name.
    package var appID: String { caller.app.appID }
    package var displayName: String { caller.app.displayName }
    /// Where the app directory was when it asked.
    package var path: String { caller.app.directory }

    /// What approving an `approve` request of an app in an app root means
    /// for its updates, as the guardian is shown it before deciding.
    var updateKeyConsequence: String {
        guard let key = caller.app.updateKey else { return "" }
        return "; new versions signed by its update key \(key.declaration) will be swapped in without asking you"
    }

    /// Ends the request with `outcome`, unless it has ended already.
    /// - Returns: whether this call ended it.
    @discardableResult
    func end(_ outcome: Outcome) -> Bool {
        let ended = self.outcome.withLock { current in
            guard current == nil else { return false }
            current = outcome
            return true
        }
        if ended { signal.broadcast() }
        return ended
    }

    /// How it ended, or nil while it waits.
    var ending: Outcome? { outcome.withLock { $0 } }

    /// Waits until the request ends, expires, or the app hangs up (which
    /// wakes the wait at once).
    func wait(unless hangUp: HangUp) -> Outcome {
        hangUp.watch(signal) {
            signal.wait(until: deadline, ready: { self.ending != nil || hangUp.isSet }, onTimeout: {})
        }
        if hangUp.isSet { end(.canceled("the app went away")) }
        end(.expired)
        return ending ?? .expired
    }
}
