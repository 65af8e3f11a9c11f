import Dispatch
import FamilyControls

/// A Guard that lives in the test process, for an app's own tests: no root,
/// no PAM, no socket, no person at a sheet.
///
/// The test plays the guardian and the administrator: it answers the
/// authentication sheet, changes the stored status as `familyctl` would, and
/// checks how the app reacts.
///
/// ```swift
/// let familyGuard = InMemoryGuard()
/// familyGuard.willAnswer(.approve)
/// let model = ScreenTimeModel(center: familyGuard.center)
/// await model.requestAccess()
/// #expect(model.status == .approved)
///
/// await familyGuard.setStatus(.denied)     // a guardian changes it with familyctl
/// #expect(model.status == .denied)
/// ```
///
/// An app that uses ``AuthorizationCenter/shared`` directly is tested with
/// ``withSharedCenter(user:status:isolation:_:)``, which points the shared
/// center at an in-memory Guard for the length of one test.
///
/// The center follows Apple's rules whichever Guard answers: its status starts
/// `.notDetermined`, is set when a request ends, follows outside changes only
/// after a successful request, and stops following after a successful revoke.
public final class InMemoryGuard: Sendable {
    /// A center that talks to this Guard; it starts as in a fresh process.
    public let center: AuthorizationCenter

    let engine: InMemoryGuardEngine

    /// A Guard holding `status` for the app (what an earlier run left).
    ///
    /// - Parameters:
    ///   - user: what the app's user is in the family configuration: a request
    ///     for the other kind fails with ``FamilyControlsError/invalidAccountType``,
    ///     as with the real Guard. Nil accepts either.
    ///   - status: the stored status; an approval is stored as approved for
    ///     `user` (a child when nil).
    public convenience init(user: FamilyControlsMember? = nil, status: AuthorizationStatus = .notDetermined) {
        let engine = InMemoryGuardEngine(user: user, status: status)
        self.init(engine: engine, center: AuthorizationCenter(backend: engine))
    }

    private init(engine: InMemoryGuardEngine, center: AuthorizationCenter) {
        self.engine = engine
        self.center = center
    }

    /// Runs `body` with ``AuthorizationCenter/shared`` talking to a new
    /// in-memory Guard, then gives the shared center back to the real Guard.
    ///
    /// The shared center is reset as for a fresh process before and after.
    /// Tests that use it run one at a time, whichever suite they are in; a
    /// sheet left unanswered is canceled at the end.
    public static func withSharedCenter<Value>(
        user: FamilyControlsMember? = nil,
        status: AuthorizationStatus = .notDetermined,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (InMemoryGuard) async throws -> Value
    ) async rethrows -> Value {
        await SharedCenterLock.shared.acquire()
        let engine = InMemoryGuardEngine(user: user, status: status)
        let familyGuard = InMemoryGuard(engine: engine, center: .shared)
        await AuthorizationCenter.shared.replaceBackend(with: engine)
        do {
            let value = try await body(familyGuard)
            await restoreSharedCenter(after: engine)
            return value
        } catch {
            await restoreSharedCenter(after: engine)
            throw error
        }
    }

    private static func restoreSharedCenter(after engine: InMemoryGuardEngine) async {
        engine.cancelWaitingSheets()
        await AuthorizationCenter.shared.replaceBackend(with: GuardBackend())
        await SharedCenterLock.shared.release()
    }

    // MARK: The store

    /// The status the Guard holds for the app: what `familyctl status` would show.
    public var storedStatus: AuthorizationStatus { engine.storedStatus }

    /// Every request the app made, in order, with the member it asked for.
    public var requests: [FamilyControlsMember] { engine.requests }

    /// How many times the app called `revokeAuthorization`.
    public var revocations: Int { engine.revocations }

    /// Whether the Guard answers; when false every request and revoke fails
    /// at once with ``FamilyControlsError/unavailable``, as with no socket.
    public var isRunning: Bool {
        get { engine.isRunning }
        set { engine.isRunning = newValue }
    }

    #if os(Linux)
    /// The session this process runs in as the app's monitor, as if the
    /// Guard had started it there (Linux only): set, the center's
    /// ``AuthorizationCenter/monitorContext`` names this session (read once,
    /// then kept, as from the real Guard); nil, the app was started any
    /// other way. Set it before the app first asks.
    public var monitorSession: String? {
        get { engine.monitorSession }
        set { engine.monitorSession = newValue }
    }

    /// How many times the center asked whether this process is the app's
    /// monitor (`IdentifyMonitor`); never while ``monitorSession`` is nil,
    /// since without the Guard's variables the center does not ask.
    public var monitorIdentifications: Int { engine.identifications }
    #endif

    // MARK: Login limits (Linux only)

    /// A ``TimeLimitsStore`` on this Guard, for an app that sets its child's
    /// login limits: the same rules as the system's Guard (only an app
    /// approved for a child; stricter at once; looser limits and more time
    /// a parent's or guardian's decision, at the sheet:
    /// ``Sheet/Purpose-swift.enum/timeLimits(_:)`` and
    /// ``Sheet/Purpose-swift.enum/moreTime(minutes:reason:)``).
    public var timeLimitsStore: TimeLimitsStore { TimeLimitsStore(center: center) }

    /// The login limits the app keeps for its child, as the Guard holds
    /// them; nil for none.
    public var timeLimits: LoginLimits? { engine.keptTimeLimits }

    /// The child's session time today, from which
    /// ``LoginLimitsInForce/timeLeft`` is counted (none at first).
    public var timeUsedToday: Duration {
        get { engine.timeUsedToday }
        set { engine.timeUsedToday = newValue }
    }

    // MARK: The sheet

    /// Answers the next sheets, in order, as they open: a request that is not
    /// already approved, a revoke of a child's approval, looser login limits
    /// and a request for more time each take one.
    /// A sheet with no queued answer waits for ``nextSheet(timeout:)``.
    public func willAnswer(_ answers: Answer...) {
        engine.queue(answers)
    }

    /// Waits until a request, a revoke or a parent's decision is at the sheet with no queued answer,
    /// and returns it: the app is now waiting for a person, and the test
    /// decides with ``Sheet/answer(_:)``.
    /// - Throws: ``TimedOut`` when no sheet opens within `timeout`.
    public func nextSheet(timeout: Duration = .seconds(30)) async throws -> Sheet {
        try await engine.nextSheet(timeout: timeout)
    }

    // MARK: Outside changes

    /// Sets the stored status as an administrator or a guardian does with
    /// `familyctl set` or `familyctl revoke` (`.notDetermined`), or as a
    /// graduation does, and returns once the centers following it have
    /// changed (see ``settle()``).
    public func setStatus(_ status: AuthorizationStatus) async {
        engine.set(status)
        await settle()
    }

    /// Returns once the main queue has run what was already waiting on it and
    /// what that scheduled in turn, twice over: a status change the center
    /// applies, and values that `receive(on: DispatchQueue.main)` or
    /// `receive(on: RunLoop.main)` delivers after it.
    public func settle() async {
        for _ in 0..<3 {
            await withCheckedContinuation { continuation in
                DispatchQueue.main.async { continuation.resume() }
            }
        }
    }
}
