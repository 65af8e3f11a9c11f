/// One way a child could become someone the locks do not hold (root, a
/// guardian) or change the Guard itself: every lock is moot then.
package struct ChildPrivilege: Hashable, Sendable {
    package var child: String
    /// `refused` where it certainly defeats the locks, `warning` where it depends on the site's policy.
    package var severity: ConfigurationFinding.Severity
    /// What the child can do: "can become root", "can log in as guardian bob".
    package var outcome: String
    /// How: "member of group sudo", "sudoers: alice ALL=(ALL) ALL".
    package var way: String
    /// Why that matters, for `--check-config`.
    package var why: String
    /// Where the way is written (`/etc/sudoers.d/x`, or the configuration for a group), and its line (0: the whole file).
    package var file: String
    package var line: Int

    /// One line for people: `child alice can become root (member of group sudo)`.
    package var summary: String { "child \(child) \(outcome) (\(way))" }

    package var finding: ConfigurationFinding {
        ConfigurationFinding(severity: severity, file: file, line: line, message: summary + (why.isEmpty ? "" : ": \(why)"))
    }
}

/// What ``ChildPrivilegeCheck`` found: the ways, and what it could not look at.
package struct ChildPrivilegeReport: Sendable {
    package var privileges: [ChildPrivilege] = []
    /// Warnings about what could not be checked (a sudoers file only root may read).
    package var unchecked: [ConfigurationFinding] = []

    package var findings: [ConfigurationFinding] { privileges.map(\.finding) + unchecked }

    /// What root's `familyctl status` is told, refusals first: one summary per way
    /// (familyctl shows the first, and how many more).
    package var statusWarnings: [String] {
        let ordered = privileges.filter { $0.severity == .refused } + privileges.filter { $0.severity == .warning }
        return ordered.map(\.summary)
    }
}
