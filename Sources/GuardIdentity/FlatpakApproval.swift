import FlatpakNames
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
    /// The runtime the app runs on, as approved: nil only for approvals
    /// recorded before the Guard judged runtimes.
    package var runtime: FlatpakRuntimePin?

    package init(appID: String, arch: String, branch: String, remote: String, url: String, commit: String,
                 timestamp: UInt64, runtime: FlatpakRuntimePin? = nil) {
        self.appID = appID
        self.arch = arch
        self.branch = branch
        self.remote = remote
        self.url = url
        self.commit = commit
        self.timestamp = timestamp
        self.runtime = runtime
    }

    /// `app/ID/ARCH/BRANCH`.
    package var ref: String { "app/\(appID)/\(arch)/\(branch)" }

    /// What the store keeps of it beside the deployment.
    package var origin: FlatpakOrigin { FlatpakOrigin(remote: remote, url: url, commitTime: timestamp, runtime: runtime) }
}

/// The runtime an approved Flatpak app in the Guard's installation runs
/// on: its `ID/ARCH/BRANCH` (what the app's `metadata` names), the commit
/// deployed there when it was approved, and that commit's time. The
/// runtime is the sandbox's `/usr` (its shell, its libraries): its
/// commits are judged as the app's are (``FlatpakUpdateJudge``).
package struct FlatpakRuntimePin: Hashable, Sendable {
    package var name: String
    package var commit: String
    package var timestamp: UInt64

    package init(name: String, commit: String, timestamp: UInt64) {
        self.name = name
        self.commit = commit
        self.timestamp = timestamp
    }

    /// `runtime/ID/ARCH/BRANCH`.
    package var ref: String { "runtime/\(name)" }

    /// The three parts of ``name``, when it has exactly three valid ones.
    package var parts: (id: String, arch: String, branch: String)? { Self.parts(of: name) }

    /// The three parts of a runtime's `ID/ARCH/BRANCH`, when it has exactly three valid ones.
    package static func parts(of name: String) -> (id: String, arch: String, branch: String)? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, FlatpakNames.isValidAppID(parts[0]), FlatpakNames.isValidArch(parts[1]),
              FlatpakNames.isValidBranch(parts[2]) else { return nil }
        return (parts[0], parts[1], parts[2])
    }
}

/// Where an app in the Guard's installation updates from, and the approved
/// commit's time (seconds since 1970): what ``FlatpakApproval`` adds to the
/// recorded deployment.
package struct FlatpakOrigin: Hashable, Sendable {
    package var remote: String
    package var url: String
    package var commitTime: UInt64
    /// The runtime as approved; nil in approvals recorded before runtimes were judged.
    package var runtime: FlatpakRuntimePin?

    package init(remote: String, url: String, commitTime: UInt64, runtime: FlatpakRuntimePin? = nil) {
        self.remote = remote
        self.url = url
        self.commitTime = commitTime
        self.runtime = runtime
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
