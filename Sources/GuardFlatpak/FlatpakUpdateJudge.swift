import FamilyConfiguration
import GuardIdentity

/// Decides whether the commit now deployed in the Guard's installation for
/// an approved app keeps the approval: an update the child (or a software
/// centre) made through `flatpak-system-helper` from the app's own remote,
/// to a newer commit, does, when that remote is one the site trusts
/// (``FlatpakTrust``) and the installation names it with the trusted URL
/// and verifies it with the trusted keys only; a downgrade, a commit of
/// another ref, a remote whose URL changed, or any remote the site does not
/// trust (one added pinned, from a child's configuration) waits for a guardian.
///
/// "Newer": the new commit descends from the approved one (its parent
/// chain, walked through the commit objects the repository still holds, at
/// most ``ancestryLimit`` steps, reaches it), or, where the chain breaks
/// off because Flatpak pulled only the newest commit (its default depth),
/// the new commit's time is later than the approved one's. A chain that
/// ends at a root commit without meeting the approved one is another
/// history: it waits for a guardian whatever its time.
package struct FlatpakUpdateJudge: Sendable {
    package var installation: GuardFlatpakInstallation
    /// The remotes the site trusts.
    package var trusted: [FlatpakTrustedRemote]
    package static let ancestryLimit = 256

    package init(installation: GuardFlatpakInstallation, trusted: [FlatpakTrustedRemote]) {
        self.installation = installation
        self.trusted = trusted
    }

    package func judge(_ approval: FlatpakApproval) -> FlatpakUpdateVerdict {
        let app = judgeApp(approval)
        guard let pin = approval.runtime else { return app }
        var next: FlatpakApproval
        switch app {
        case .notInstalled, .needsGuardian: return app
        case .unchanged: next = approval
        case .approved(let moved): next = moved
        }
        switch judgeRuntime(pin, remote: next.remote) {
        case .unchanged:
            return app
        case .follows(let runtime):
            next.runtime = runtime
            return .approved(next)
        case .guardian(let reason):
            return .needsGuardian(from: approval.commit, to: next.commit, reason: "its runtime \(pin.name): \(reason)")
        }
    }

    private enum RuntimeVerdict { case unchanged, follows(FlatpakRuntimePin), guardian(String) }

    /// The runtime deployed now against `pin`: the approved commit; a newer
    /// one the trusted remote `remote` gives (the app's remote, whose keys
    /// the site lists); or a guardian's decision.
    private func judgeRuntime(_ pin: FlatpakRuntimePin, remote: String) -> RuntimeVerdict {
        let active: String?
        do {
            active = try installation.activeCommit(runtime: pin.name)
        } catch {
            return .guardian("\(error)")
        }
        guard let active else { return .guardian("it is no longer deployed in the Guard's installation") }
        guard active != pin.commit else { return .unchanged }
        if let problem = untrusted(runtime: pin.name, commit: active, remote: remote) {
            return .guardian("commit \(active.prefix(16)) is not the approved \(pin.commit.prefix(16)): \(problem)")
        }
        switch descent(of: active, ref: pin.ref, from: pin.commit, approvedAt: pin.timestamp) {
        case .newer(let commit): return .follows(FlatpakRuntimePin(name: pin.name, commit: active, timestamp: commit.timestamp))
        case .refused(let reason): return .guardian(reason)
        }
    }

    /// Why commit `commit` of runtime `name` is not one the site vouches
    /// for: it must be what the trusted `remote` (the app's, with only the
    /// keys the site lists) gives; nil when it is.
    package func untrusted(runtime name: String, commit: String, remote: String) -> String? {
        guard let site = trusted.first(where: { $0.name == remote }) else {
            return "remote \(remote) is not one this site trusts ([Flatpak] TrustedRemote=)"
        }
        if let problem = installation.untrustedKeys(of: remote, site: site) {
            return "remote \(remote) is not the one this site trusts: \(problem)"
        }
        do {
            guard try installation.remoteRef(remote, runtime: name) == commit else {
                return "the deployed commit \(commit.prefix(16)) is not the one remote \(remote) gave"
            }
        } catch {
            return "\(error)"
        }
        return nil
    }

    private enum Descent { case newer(OstreeCommit), refused(String) }

    /// Whether `active`, deployed for `ref`, is an update of the approved
    /// commit: bound to that ref (or to none), and its descendant or, where
    /// the history was not pulled, newer.
    private func descent(of active: String, ref: String, from approved: String, approvedAt time: UInt64) -> Descent {
        let commit: OstreeCommit
        do {
            commit = try installation.commit(active)
        } catch {
            return .refused("\(error)")
        }
        guard commit.refBindings.isEmpty || commit.refBindings.contains(ref) else {
            return .refused("the commit is bound to another ref")
        }
        switch lineage(from: commit, to: approved) {
        case .descendant:
            return .newer(commit)
        case .unrelated:
            return .refused("the commit does not descend from the approved one")
        case .unknown:
            guard commit.timestamp > time else { return .refused("the commit is not newer than the approved one (a downgrade)") }
            return .newer(commit)
        }
    }

    /// The runtime `name` as deployed now, as a guardian would let it in;
    /// nil when it is not deployed or its commit cannot be read.
    package func deployedRuntime(_ name: String) -> FlatpakRuntimePin? {
        guard let active = try? installation.activeCommit(runtime: name), let commit = try? installation.commit(active) else {
            return nil
        }
        return FlatpakRuntimePin(name: name, commit: active, timestamp: commit.timestamp)
    }

    private func judgeApp(_ approval: FlatpakApproval) -> FlatpakUpdateVerdict {
        let active: String?
        do {
            active = try installation.activeCommit(appID: approval.appID, arch: approval.arch, branch: approval.branch)
        } catch {
            return .needsGuardian(from: approval.commit, to: "", reason: "\(error)")
        }
        guard let active else { return .notInstalled }
        guard active != approval.commit else { return .unchanged }
        func guardian(_ reason: String) -> FlatpakUpdateVerdict { .needsGuardian(from: approval.commit, to: active, reason: reason) }

        // The remote: still the approved URL, and its ref is what is deployed.
        do {
            let remote = try installation.remote(approval.remote)
            guard remote.url.utf8.elementsEqual(approval.url.utf8) else { return guardian("the remote \(approval.remote) now names another URL") }
            guard try installation.remoteRef(approval.remote, appID: approval.appID, arch: approval.arch,
                                             branch: approval.branch) == active else {
                return guardian("the deployed commit is not the one remote \(approval.remote) gave")
            }
        } catch {
            return guardian("\(error)")
        }
        guard let site = trusted.first(where: { $0.name == approval.remote }) else {
            return guardian("remote \(approval.remote) is not one this site trusts ([Flatpak] TrustedRemote=)")
        }
        if let problem = installation.untrustedKeys(of: approval.remote, site: site) {
            return guardian("remote \(approval.remote) is not the one this site trusts: \(problem)")
        }
        switch descent(of: active, ref: approval.ref, from: approval.commit, approvedAt: approval.timestamp) {
        case .newer(let commit):
            var moved = approval
            moved.commit = active
            moved.timestamp = commit.timestamp
            return .approved(moved)
        case .refused(let reason):
            return guardian(reason)
        }
    }

    /// The commit deployed now, as a guardian would let it in (the verdict
    /// was ``FlatpakUpdateVerdict/needsGuardian(from:to:reason:)``): of the
    /// remote whose ref names it, the approved remote first, with that
    /// remote's URL and the commit's time; nil when no remote's ref names it
    /// (a commit installed from a file, say), since then no later update
    /// could be judged against it.
    package func candidate(after approval: FlatpakApproval, commit active: String) -> FlatpakApproval? {
        guard let names = try? installation.remoteNames(),
              let commit = try? installation.commit(active) else { return nil }
        let ordered = names.contains(approval.remote) ? [approval.remote] + names.filter { $0 != approval.remote } : names
        for name in ordered {
            guard (try? installation.remoteRef(name, appID: approval.appID, arch: approval.arch,
                                               branch: approval.branch)) == active,
                  let remote = try? installation.remote(name) else { continue }
            var next = approval
            next.remote = name
            next.url = remote.url
            next.commit = active
            next.timestamp = commit.timestamp
            if let pin = approval.runtime { next.runtime = deployedRuntime(pin.name) ?? pin }
            return next
        }
        return nil
    }

    private enum Lineage { case descendant, unrelated, unknown }

    private func lineage(from start: OstreeCommit, to ancestor: String) -> Lineage {
        var current = start
        for _ in 0..<Self.ancestryLimit {
            guard let parent = current.parent else { return .unrelated }
            if parent == ancestor { return .descendant }
            do {
                current = try installation.commit(parent)
            } catch {
                // Flatpak pulls only the newest commit: a missing parent breaks the chain off;
                // a parent that is there but malformed is no history to trust.
                if case .unreadable = error { return .unknown }
                return .unrelated
            }
        }
        return .unknown
    }
}
