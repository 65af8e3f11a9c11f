import AuthorizationRules
import Dispatch
import FamilyControls
import Foundation
import GuardProtocol
import Synchronization
import TimeLimits

/// The in-memory Guard's state and its answers to the center: the
/// `AuthorizationBackend` an ``InMemoryGuard`` hands its center.
final class InMemoryGuardEngine: AuthorizationBackend {
    struct WaitingSheet {
        var id: Int
        var purpose: Sheet.Purpose
        var handedOut = false
        var reply: SheetReply
    }
    struct Watcher {
        var id: Int
        var continuation: CheckedContinuation<Sheet, any Error>
    }
    struct State {
        let user: FamilyControlsMember?
        var status: AuthorizationStatus
        var approvedMember: FamilyControlsMember?
        var isRunning = true
        var answers: [Answer] = []
        var sheets: [WaitingSheet] = []
        var watchers: [Watcher] = []
        var expired: Set<Int> = []
        var followers: [Int: @Sendable (AuthorizationStatus) -> Void] = [:]
        var nextID = 0
        var requests: [FamilyControlsMember] = []
        var revocations = 0
        /// The session this process runs in as the app's monitor, if it does.
        var monitorSession: String?
        var identifications = 0
        /// The app's login limits for its child, as the Guard keeps them.
        var timeLimits: TimeLimits?
        /// More time given today, and the time used today.
        var moreTime = 0, timeUsed = 0

        /// The stored authorization as the shared rules read it.
        var recorded: RecordedAuthorization? {
            guard status.isApproval, let approvedMember else { return nil }
            return RecordedAuthorization(status: status, member: approvedMember, approvedBy: InMemoryGuardEngine.guardian)
        }

        mutating func makeID() -> Int {
            nextID += 1
            return nextID
        }
    }
    let state: Mutex<State>

    init(user: FamilyControlsMember?, status: AuthorizationStatus) {
        let approvedMember = status.isApproval ? user ?? .child : nil
        state = Mutex(State(user: user, status: status, approvedMember: approvedMember))
    }

    var storedStatus: AuthorizationStatus { state.withLock { $0.status } }
    var requests: [FamilyControlsMember] { state.withLock { $0.requests } }
    var revocations: Int { state.withLock { $0.revocations } }
    var identifications: Int { state.withLock { $0.identifications } }
    var monitorSession: String? {
        get { state.withLock { $0.monitorSession } }
        set { state.withLock { $0.monitorSession = newValue } }
    }
    var isRunning: Bool {
        get { state.withLock { $0.isRunning } }
        set { state.withLock { $0.isRunning = newValue } }
    }

    // MARK: AuthorizationBackend

    func request(_ member: FamilyControlsMember, prompter: any Prompter) async -> Result<AuthorizationStatus, GuardFailure> {
        let running = state.withLock { state in
            state.requests.append(member)
            return state.isRunning
        }
        guard running else { return .failure(Self.unavailable) }
        return await run(.request(member))
    }

    /// The in-memory Guard holds no app folder to swap: an update is
    /// `.unavailable`, as from a sandbox with no Guard. Test updates against
    /// the real Guard.
    func update(prompter: any Prompter) async -> Result<AppUpdateOutcome, GuardFailure> {
        .failure(GuardFailure(.unavailable, "the in-memory Guard has no app folder to update; updates need the real Guard"))
    }

    func revoke(prompter: any Prompter) async -> Result<Void, GuardFailure> {
        let running = state.withLock { state in
            state.revocations += 1
            return state.isRunning
        }
        guard running else { return .failure(Self.unavailable) }
        return await run(.revoke).map { _ in () }
    }

    /// Runs the Guard's own sequence (``AppRequestFlow``) over this Guard's
    /// steps, on a thread of its own: they block on the test's answers, as
    /// the Guard's block on people.
    private func run(_ purpose: AppRequestFlow<InMemoryRequestSteps>.Purpose) async -> Result<AuthorizationStatus, GuardFailure> {
        let steps = InMemoryRequestSteps(engine: self, purpose: purpose)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                do throws(GuardFailure) {
                    continuation.resume(returning: .success(try AppRequestFlow(purpose, steps: steps).run()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
    }

    /// The environment the Guard would have set, for the monitor it started.
    var monitorClaim: MonitorClaim? {
        state.withLock { state in state.monitorSession.map { MonitorClaim(appID: Self.app.appID, session: $0) } }
    }

    func identifyMonitor() async -> Result<IdentifiedMonitor?, GuardFailure> {
        state.withLock { state in
            state.identifications += 1
            guard state.isRunning else { return .failure(Self.unavailable) }
            return .success(state.monitorSession.map { IdentifiedMonitor(appID: Self.app.appID, user: Self.app.user, session: $0) })
        }
    }

    func follow(_ update: @escaping @Sendable (AuthorizationStatus) -> Void) -> any StatusFollowing {
        let id = state.withLock { state in
            let id = state.makeID()
            state.followers[id] = update
            return id
        }
        return Following(engine: self, id: id)
    }

    private struct Following: StatusFollowing {
        let engine: InMemoryGuardEngine
        let id: Int
        func stop() { _ = engine.state.withLock { $0.followers.removeValue(forKey: id) } }
    }

    // MARK: The test's side

    func set(_ status: AuthorizationStatus) {
        change(to: status, member: state.withLock { $0.approvedMember ?? $0.user ?? .child })
    }

    func queue(_ answers: [Answer]) {
        state.withLock { $0.answers.append(contentsOf: answers) }
    }

    func nextSheet(timeout: Duration) async throws -> Sheet {
        let watcherID = state.withLock { $0.makeID() }
        let timer = Task { [weak self] in
            do {
                try await Task.sleep(for: timeout)
            } catch {
                return
            }
            self?.expire(watcher: watcherID, timeout: timeout)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Sheet, any Error>) in
            enum Outcome { case ready(Sheet), expired, waiting }
            let outcome: Outcome = state.withLock { state in
                if state.expired.remove(watcherID) != nil { return .expired }
                if let index = state.sheets.firstIndex(where: { !$0.handedOut }) {
                    state.sheets[index].handedOut = true
                    return .ready(Sheet(purpose: state.sheets[index].purpose, id: state.sheets[index].id, engine: self))
                }
                state.watchers.append(Watcher(id: watcherID, continuation: continuation))
                return .waiting
            }
            switch outcome {
            case .ready(let sheet): continuation.resume(returning: sheet)
            case .expired: continuation.resume(throwing: Self.noSheet(timeout))
            case .waiting: break
            }
        }
    }

    private func expire(watcher id: Int, timeout: Duration) {
        let continuation = state.withLock { state -> CheckedContinuation<Sheet, any Error>? in
            guard let index = state.watchers.firstIndex(where: { $0.id == id }) else {
                // Not waiting yet: the wait ends as soon as it starts.
                state.expired.insert(id)
                return nil
            }
            return state.watchers.remove(at: index).continuation
        }
        continuation?.resume(throwing: Self.noSheet(timeout))
    }

    private static func noSheet(_ timeout: Duration) -> TimedOut {
        TimedOut(waitingFor: "a request, a revoke or a parent's decision at the sheet", timeout: timeout)
    }

    func answer(sheet id: Int, with answer: Answer) {
        let reply = state.withLock { state -> SheetReply? in
            guard let index = state.sheets.firstIndex(where: { $0.id == id }) else { return nil }
            return state.sheets.remove(at: index).reply
        }
        reply?.give(answer)
    }

    /// Cancels every sheet still waiting, so no call of the app hangs.
    func cancelWaitingSheets() {
        let waiting = state.withLock { state in
            defer { state.sheets.removeAll() }
            return state.sheets.map(\.reply)
        }
        for reply in waiting { reply.give(.cancel) }
    }

    // MARK: Internals

    static let unavailable = GuardFailure(.unavailable, "the Guard is not running")
    /// The app and its user as the rules name them: this Guard knows no names.
    static let app = AskingApp(user: "the user", appID: "the app", displayName: "the app")
    /// Who decides from their own session.
    static let guardian = "the guardian"

    // MARK: The steps' side (InMemoryRequestSteps)

    /// One request or revoke at a time, as the Guard's turn per user and app.
    private let turn = DispatchSemaphore(value: 1)

    func inTurn<R>(_ body: () throws(GuardFailure) -> R) throws(GuardFailure) -> R {
        turn.wait()
        defer { turn.signal() }
        return try body()
    }

    /// The refusal of a request as `member` from this Guard's user, if any.
    func admission(_ member: FamilyControlsMember) -> GuardFailure? {
        state.withLock { state in
            state.user.flatMap { AuthorizationRules.admission(member, isChild: $0 == .child, app: Self.app) }
        }
    }

    var recorded: RecordedAuthorization? { state.withLock { $0.recorded } }

    /// The test's answer at the sheet for `purpose` (a queued one, or the
    /// one the test gives at the sheet), waited for on the calling thread:
    /// the flow's own, never one of the concurrency pool's.
    func waitForAnswer(for purpose: Sheet.Purpose) -> Answer {
        let reply = SheetReply()
        let (queued, watcher): (Answer?, (Watcher, Sheet)?) = state.withLock { state in
            if !state.answers.isEmpty { return (state.answers.removeFirst(), nil) }
            let id = state.makeID()
            var sheet = WaitingSheet(id: id, purpose: purpose, reply: reply)
            guard !state.watchers.isEmpty else {
                state.sheets.append(sheet)
                return (nil, nil)
            }
            sheet.handedOut = true
            state.sheets.append(sheet)
            return (nil, (state.watchers.removeFirst(), Sheet(purpose: purpose, id: id, engine: self)))
        }
        if let queued { return queued }
        if let (watcher, sheet) = watcher { watcher.continuation.resume(returning: sheet) }
        return reply.wait()
    }

    /// One sheet's answer: given once, from any thread; waited for on the flow's.
    final class SheetReply: @unchecked Sendable {
        private var answer = Answer.cancel
        private let given = DispatchSemaphore(value: 0)

        func give(_ answer: Answer) {
            self.answer = answer
            given.signal()
        }

        func wait() -> Answer {
            given.wait()
            return answer
        }
    }

    /// Stores `status` and tells every follower, as the Guard's status hub does.
    func change(to status: AuthorizationStatus, member: FamilyControlsMember?) {
        let followers = state.withLock { state in
            state.status = status
            state.approvedMember = status.isApproval ? member : nil
            return Array(state.followers.values)
        }
        for follower in followers { follower(status) }
    }
}

extension AuthorizationStatus {
    var isApproval: Bool { self == .approved }
}

