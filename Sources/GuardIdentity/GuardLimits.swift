/// The Guard's fixed bounds, in one place: threads, what one user or one
/// connection may hold at once, how fast a user may ask, how the audit trail
/// folds repeats. Each bound keeps a hostile or broken client from costing
/// the Guard more than that; none is a configuration key, since none is a
/// choice a family makes. Given to ``AuthorizationPolicy`` at construction
/// (``GuardService`` and the daemon's server read it from there), as
/// `VarlinkServerConfiguration` is to the server; tests pass smaller ones.
package struct GuardLimits: Sendable {
    // Threads (ARCHITECTURE.md, Threads).

    /// `guard-work`: short blocking work (identifying callers, admin calls,
    /// locks, reconcile); enough to keep cores and disks busy.
    package var workThreads = 16
    /// `guard-talk`: apps' requests under way at once, beyond which a request
    /// is refused as busy.
    package var conversationThreads = 512
    /// `guard-decide`: decisions under way at once (guardians at their PAM
    /// prompt, root).
    package var decisionThreads = 64
    /// Conversations one user (other than root) may have under way at once,
    /// beyond which the next is refused as busy, saying why: a child has at
    /// most ``pendingRequestsPerUser`` requests waiting anyway.
    package var conversationsPerUser = 4

    // Requests.

    /// Requests one child may have waiting for a parent or guardian at once.
    package var pendingRequestsPerUser = 4
    /// Requests waiting at once, every child together.
    package var pendingRequestsTotal = 256
    /// Times one request's person may go back from the parent or
    /// guardian's prompts at the child's screen to the alert's choices;
    /// past it the prompts no longer offer it. Going back never gives back
    /// an attempt, so this only bounds how long one request can keep its
    /// app's turn.
    package var returnsToAlertPerRequest = 5
    /// Requests a user may start at once (``RequestQuota``)…
    package var requestBurst = 10
    /// …and how long it takes to earn one more.
    package var requestInterval: Duration = .seconds(30)
    /// Terminal sessions whose last authentication is remembered
    /// (`GuardianTimeout=`); beyond it the oldest is forgotten and its
    /// guardian simply asked again.
    package var guardianSessions = 1024

    // Connections.

    /// Connections one user other than root may hold on the Guard at once.
    package var connectionsPerUser = 64
    /// How long nothing reaches the Guard's socket before it lets go of the
    /// pages of code and constants it ran (they stay in the page cache).
    package var codeLetGoWhenQuietFor: Duration = .seconds(1)
    /// Calls one connection may have waiting for the Guard's work
    /// (identification, admin calls); past it the Guard reads no more of that
    /// connection's calls.
    package var pendingCallsPerConnection = 64
    /// Streams (`Subscribe`, `WatchRequests`) one connection may hold: an app
    /// follows its status once.
    package var subscriptionsPerConnection = 4

    // Sessions a rule locks or ends (``SessionEnforcer``).

    /// How long a session's processes have, after `SIGTERM` and `SIGHUP`,
    /// before `SIGKILL`; and how long a screen locker has to lock a session
    /// logind was asked to lock before the session is ended instead.
    package var sessionEndGrace: Duration = .seconds(5)
    /// Sessions waiting to be locked or ended at once; past it a request is
    /// logged and dropped (there are never more sessions than this anyway).
    package var sessionsWaitingForEnforcement = 4096
    /// Processes one ending signals, all its sessions together: a child who
    /// forks faster than they are found is met by ``sessionKillRounds``.
    package var processesEndedAtOnce = 4096
    /// Processes read from `/proc` at once to find a session's.
    package var processesReadAtOnce = 65536
    /// Rounds of looking for the session's processes again and killing
    /// them, so that a process forked during the grace period dies too.
    package var sessionKillRounds = 8
    /// Outcomes kept for `recentOutcomes()` (the log has them all).
    package var sessionOutcomesKept = 64

    // Session time (the time keeper, `GuardTime`).

    /// How long before a child's time is up (the day's time spent, or the
    /// hours ending) they are warned in their sessions, longest first.
    package var timeWarnings: [Duration] = [.seconds(300), .seconds(60)]
    /// While a child's time is up and they still have a session (one they
    /// unlocked, or opened without the PAM module's account check), how
    /// often their sessions are locked or ended again, at most.
    package var timeEnforcedAgainAfter: Duration = .seconds(10)
    /// How often the time used is written to the store and the login-limits
    /// file rewritten while a child with a daily limit is logged in.
    package var timeRecordInterval: Duration = .seconds(60)
    /// The longest the time keeper waits before looking at the sessions and
    /// the clock again (logind's sessions end without telling it).
    package var timeLookInterval: Duration = .seconds(5)
    /// How long a warning that reached no terminal and no desktop is told
    /// again at each look: a desktop starts after the login that made it due.
    package var timeWarningToldAgainFor: Duration = .seconds(90)
    /// Days of session time kept in the store.
    package var timeDaysKept = 35

    // The audit trail.

    /// How long after an event that changed nothing the same event again is
    /// counted on its row, in seconds: an hour's flood is one line.
    package var auditRepeatWindow: Double = 3600
    /// How many of a user's latest audit rows an event is compared with for a
    /// repeat: enough for a few apps' events interleaved.
    package var auditRepeatCandidates = 64
    /// How far back (in events) a guardian's `familyctl log` without
    /// `--user` reads for their children's.
    package var auditScanBound = 100_000

    /// The Guard's own bounds.
    // What --check-config and the Guard's start read about the machine.

    /// Files and folders the search for setuid and capability programs
    /// examines (about 80 000 on a desktop's /usr), beyond which it stops and
    /// says so.
    package var privilegedProgramEntries = 400_000
    /// Levels of folders it descends.
    package var privilegedProgramDepth = 32
    /// dpkg file lists read to tell the distribution's programs.
    package var packageLists = 50_000
    /// Accounts listed (`getpwent`) to find uids shared between them.
    package var accountsListed = 200_000

    // Time limits.

    /// The most minutes of more time one request asks for, or one decision
    /// (`familyctl approve ID --minutes N`, `familyctl limits more`) gives: a day.
    package var mostMoreTimeMinutes = 1440
    /// The longest reason a child may give for more time, in characters;
    /// longer ones are cut.
    package var moreTimeReasonCharacters = 200

    package init() {}
}
