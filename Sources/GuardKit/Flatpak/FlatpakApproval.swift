/// What the Guard records of an approved Flatpak app once it lives in the
/// Guard's installation: the ref, the remote it updates from (its name and
/// URL in that installation), and the approved commit with the commit's
/// time and parent, read from the commit object when it was approved (the
/// object itself is pruned by Flatpak once an update replaces it).
package struct FlatpakApproval: Hashable, Sendable {
    package var appID: String
    package var arch: String
    package var branch: String
    package var remote: String
    package var url: String
    package var commit: String
    package var timestamp: UInt64

    /// `app/ID/ARCH/BRANCH`.
    package var ref: String { "app/\(appID)/\(arch)/\(branch)" }

    /// What the store keeps of it beside the deployment.
    package var origin: FlatpakOrigin { FlatpakOrigin(remote: remote, url: url, commitTime: timestamp) }
}

/// Where an app in the Guard's installation updates from, and the approved
/// commit's time (seconds since 1970): what ``FlatpakApproval`` adds to the
/// recorded deployment.
package struct FlatpakOrigin: Hashable, Sendable {
    package var remote: String
    package var url: String
    package var commitTime: UInt64

    package init(remote: String, url: String, commitTime: UInt64) {
        self.remote = remote
        self.url = url
        self.commitTime = commitTime
    }
}

/// What the Guard's installation holds now for an approved app, judged
/// against the approval (``FlatpakUpdateJudge``).
package enum FlatpakUpdateVerdict: Hashable, Sendable {
    /// The approved commit is still the one deployed.
    case unchanged
    /// Same remote, a newer commit: the approval moves to it.
    case approved(FlatpakApproval)
    /// Anything else waits for a guardian: a pending request of kind
    /// `update`, from the approved commit to the new one.
    case needsGuardian(from: String, to: String, reason: String)
    /// The app is no longer deployed in the Guard's installation.
    case notInstalled
}
