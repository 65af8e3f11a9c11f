#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import LockEngine
import Synchronization
import SystemKit
import GuardFlatpak
import GuardIdentity
import GuardStore

/// A moved Flatpak app's updates: followed when the site trusts them, else
/// a guardian's decision.
extension LockKeeper {
    /// When a child's app moved into the Guard's installation runs another
    /// commit than the approved one (the child updated it through Flatpak),
    /// judges it (``FlatpakUpdateJudge``): a newer commit of the approved
    /// remote moves the approval to it; anything else leaves the approval
    /// where it was, so the app is not answered as approved, and is logged.
    /// - Returns: the running commit for a guardian to let in (an `update`
    ///   request), when the approval does not follow it by itself and one of
    ///   the installation's remotes gives it; else nil.
    func followFlatpakUpdate(user: String, app: AppIdentity) throws(GuardFailure) -> PendingRequest.Update? {
        guard let running = app.flatpak else { return nil }
        return try turns.save(StatusHub.Key(user: user, appID: app.appID)) { () throws(GuardFailure) -> PendingRequest.Update? in
            guard var record = try ledger.authorization(user: user, appID: app.appID), record.member == .child,
                  record.status == .approved, let origin = record.flatpakOrigin, let approved = record.flatpak,
                  running.installation.path == approved.installation.path else { return nil }
            let judge = FlatpakUpdateJudge(installation: GuardFlatpakInstallation(path: approved.installation.path),
                                           trusted: trustedFlatpakRemotes)
            if origin.runtime == nil, running.commit == approved.commit {
                switch try recordRuntime(record, judge: judge) {
                case .recorded(let pinned):
                    record = pinned
                case .guardian(let pin, let reason):
                    // Never judged, and nothing the site trusts vouches for it: a guardian's decision.
                    let from = FlatpakApproval(appID: approved.appID, arch: approved.arch, branch: approved.branch,
                                               remote: origin.remote, url: origin.url, commit: approved.commit,
                                               timestamp: origin.commitTime, runtime: nil)
                    var candidate = from
                    candidate.runtime = pin
                    logger.warning("flatpak: \(app.appID) for \(user) runs on runtime \(pin.name) commit \(pin.commit), which "
                        + "its approval never judged: \(reason); a parent or guardian is asked")
                    return PendingRequest.Update(change: .flatpak(candidate, from: from), from: Self.describe(from),
                                                 to: "\(Self.describe(candidate)): \(DisplayText.sanitized(reason))")
                case .unknown:
                    break
                }
            }
            let runtime = record.flatpakOrigin?.runtime
            guard running.commit != approved.commit || (runtime != nil && app.flatpakRuntime?.commit != runtime?.commit) else {
                return nil
            }
            let approval = FlatpakApproval(appID: approved.appID, arch: approved.arch, branch: approved.branch,
                                           remote: origin.remote, url: origin.url, commit: approved.commit,
                                           timestamp: origin.commitTime, runtime: runtime)
            // The runtime commit the process runs on, when the approval judges runtimes.
            let runningRuntime = runtime == nil ? nil : app.flatpakRuntime?.commit
            let verdict = judge.judge(approval)
            guard case .approved(let next) = verdict, next.commit == running.commit,
                  next.runtime?.commit == runningRuntime else {
                var runs = "commit \(running.commit), not the approved \(approved.commit)"
                if let runtime, runningRuntime != runtime.commit {
                    runs += ", on runtime \(runtime.name) commit \(runningRuntime ?? "none"), not the approved \(runtime.commit)"
                }
                logger.warning("flatpak: \(app.appID) for \(user) runs \(runs); the approval does not follow it (\(verdict))")
                guard case .needsGuardian(_, let to, let reason) = verdict, to == running.commit,
                      let candidate = judge.candidate(after: approval, commit: running.commit),
                      candidate.runtime?.commit == runningRuntime else { return nil }
                return PendingRequest.Update(change: .flatpak(candidate, from: approval), from: Self.describe(approval),
                                             to: "\(Self.describe(candidate)): \(DisplayText.sanitized(reason))")
            }
            var moved = record
            moved.flatpak?.commit = next.commit
            moved.flatpakOrigin = next.origin
            moved.updatedAt = .now
            var detail = next.commit == approved.commit ? "" : "from \(approved.commit) to \(next.commit), "
            if let to = next.runtime, to.commit != runtime?.commit {
                detail += "runtime \(to.name) from \(runtime?.commit ?? "none") to \(to.commit), "
            }
            detail += "a newer commit of remote \(origin.remote)"
            try ledger.commit(moved, audit: ledger.event(.update, actor: AuditEvent.guardActor, user: user, appID: app.appID,
                                                         member: .child, outcome: .approved, detail: detail))
            logger.notice("flatpak: the approval of \(app.appID) for \(user) follows its update \(detail)")
            return nil
        }
    }

    /// What an approval recorded before runtimes were judged makes of the
    /// runtime deployed now.
    enum RuntimeRecording {
        /// Given by the app's remote, which the site trusts: recorded with the approval, audited.
        case recorded(AuthorizationRecord)
        /// Nothing the site trusts gives it (a runtime the child updated from
        /// a remote of their own before the Guard judged runtimes): a guardian's decision.
        case guardian(FlatpakRuntimePin, reason: String)
        /// The metadata names none, or it is not deployed: nothing to judge.
        case unknown
    }

    /// An approval recorded before runtimes were judged: the runtime
    /// deployed now is recorded with its app's approved commit when the
    /// app's remote, which the site trusts, gives it; else it is a guardian's.
    func recordRuntime(_ record: AuthorizationRecord, judge: FlatpakUpdateJudge) throws(GuardFailure) -> RuntimeRecording {
        guard let approved = record.flatpak, let origin = record.flatpakOrigin,
              let name = try? judge.installation.declaredRuntime(appID: approved.appID, arch: approved.arch,
                                                                branch: approved.branch, commit: approved.commit),
              let pin = judge.deployedRuntime(name) else { return .unknown }
        if let problem = judge.untrusted(runtime: name, commit: pin.commit, remote: origin.remote) {
            return .guardian(pin, reason: problem)
        }
        var pinned = record
        pinned.flatpakOrigin?.runtime = pin
        pinned.updatedAt = .now
        try ledger.commit(pinned, audit: ledger.event(.update, actor: AuditEvent.guardActor, user: record.user,
                                                      appID: record.appID, member: .child, outcome: .approved,
                                                      detail: "recorded its runtime \(name) at \(pin.commit)"))
        return .recorded(pinned)
    }

    /// Moves the approval of a child's app in the Guard's installation to
    /// `next`, a commit a guardian let in (an `update` request of
    /// ``followFlatpakUpdate(user:app:)``), if that commit is still the one
    /// deployed and the approval still the one the request was made from.
    /// Call in the (user, app) save turn.
    /// - Throws: `NotFound` when the approval or the deployment changed meanwhile.
    func letFlatpakUpdateIn(_ next: FlatpakApproval, from: FlatpakApproval, user: String, actor: String,
                            detail: String) throws(GuardFailure) {
        guard var record = try ledger.authorization(user: user, appID: next.appID), record.member == .child,
              record.status == .approved, record.flatpakOrigin != nil, let approved = record.flatpak else {
            throw GuardFailure(.notFound, "\(next.appID) is no longer approved for \(user) in the Guard's installation")
        }
        guard approved.commit == from.commit, record.flatpakOrigin?.runtime == from.runtime else {
            throw GuardFailure(.notFound, "the approval of \(next.appID) moved to commit \(approved.commit) while the "
                + "request waited; nothing was changed")
        }
        let installation = GuardFlatpakInstallation(path: approved.installation.path)
        let active: String?
        do throws(FlatpakMoveError) {
            active = try installation.activeCommit(appID: approved.appID, arch: approved.arch, branch: approved.branch)
        } catch {
            throw GuardFailure(.unavailable, "the Guard's Flatpak installation cannot be read: \(error)")
        }
        guard active == next.commit else {
            throw GuardFailure(.notFound, "the Guard's installation no longer deploys commit \(next.commit) of \(next.appID)")
        }
        if let runtime = next.runtime {
            guard (try? installation.activeCommit(runtime: runtime.name)) == runtime.commit else {
                throw GuardFailure(.notFound, "the Guard's installation no longer deploys commit \(runtime.commit) of runtime \(runtime.name)")
            }
        }
        record.flatpak?.commit = next.commit
        record.flatpakOrigin = next.origin
        record.updatedAt = .now
        try ledger.commit(record, audit: ledger.event(.update, actor: actor, user: user, appID: next.appID,
                                                      member: .child, outcome: .approved, detail: detail))
        logger.notice("flatpak: the approval of \(next.appID) for \(user) moves to commit \(next.commit) "
            + "of remote \(next.remote) (\(detail))")
    }

    /// The Flatpak remotes the site trusts now (``FlatpakTrust``).
    var trustedFlatpakRemotes: [FlatpakTrustedRemote] {
        FlatpakTrust.remotes(families.current.configuration.flatpakTrustedRemotes)
    }

    /// A commit of an app in the Guard's installation as a guardian reads it.
    static func describe(_ approval: FlatpakApproval) -> String {
        "commit \(approval.commit.prefix(16)) of remote \(approval.remote) (\(DisplayText.sanitized(approval.url)))"
            + (approval.runtime.map { " on runtime \(DisplayText.sanitized($0.name)) commit \($0.commit.prefix(16))" } ?? "")
    }
}
