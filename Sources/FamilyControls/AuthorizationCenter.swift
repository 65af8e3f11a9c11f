import Foundation
import GuardProtocol
import Observation
import Synchronization

/// The center for requesting authorization to provide parental controls.
///
/// ```swift
/// let center = AuthorizationCenter.shared
/// try await center.requestAuthorization(for: .child)
/// ```
///
/// On Linux the request goes to the Guard (`familycontrolsd`) over its socket
/// (`FAMILYCONTROLS_SOCKET`, default `/run/familycontrols/guard.socket`); the
/// alert and the guardian's authentication are shown by ``prompter``.
///
/// As Apple declares it, the class belongs to no actor. ``authorizationStatus``
/// may be read from any thread or task (the value sits behind a lock); it
/// changes only on the main actor, so `$authorizationStatus` subscribers,
/// `objectWillChange` and Observation hear of changes on the main thread,
/// where Apple asks apps to read it.
public final class AuthorizationCenter: ObservableObject, PublishingObservable, @unchecked Sendable {
    // Unchecked: the one stored `var` is the `@Published` wrapper, set once by
    // init; its value and subscribers live behind a lock in the box it shares
    // with `$authorizationStatus`. Every other stored property is a Sendable `let`.

    /// The shared center for requesting and revoking authorization.
    public static let shared = AuthorizationCenter(backend: GuardBackend())

    /// Fires on the main actor before ``authorizationStatus`` changes, for
    /// `@ObservedObject var center = AuthorizationCenter.shared`.
    public let objectWillChange = ObservableObjectPublisher()

    public let observationRegistrar = ObservationRegistrar()

    /// The status of your app's authorization to provide parental controls.
    ///
    /// Always `.notDetermined` at first; set after a request succeeds (or to
    /// `.denied` after "Don't Allow"), then kept up to date with the Guard
    /// until a revoke succeeds or the app exits.
    @Published public private(set) var authorizationStatus: AuthorizationStatus = .notDetermined

    private struct State {
        var backend: any AuthorizationBackend
        /// Bumped when the backend is replaced: results of older calls are dropped.
        var generation = 0
        var prompter: (any Prompter)?
        var follower: (any StatusFollowing)?
        var lastErrorMessage: String?
        /// The Guard's answer to whether this process is the app's monitor, once it gave one.
        var monitor: MonitorAnswer?
    }
    private let state: Mutex<State>

    package init(backend: any AuthorizationBackend) {
        state = Mutex(State(backend: backend))
    }

    /// What shows the alert, the wait for a parent or guardian, and (for an
    /// individual, or a guardian where the site allows in-person approval)
    /// the authentication sheet. Defaults to the terminal when there is one,
    /// else standard input.
    ///
    /// `FAMILYCONTROLS_ASKPASS` names an askpass program for an individual's
    /// own password only: a child's environment is the child's, so it never
    /// chooses what is shown a parent or guardian.
    public var prompter: any Prompter {
        get { prompter(for: .child) }
        set { state.withLock { $0.prompter = newValue } }
    }

    /// The prompter a request for `member` uses: the one set, else the
    /// terminal, else (for an individual only) `FAMILYCONTROLS_ASKPASS`, else
    /// standard input.
    private func prompter(for member: FamilyControlsMember) -> any Prompter {
        if let chosen = state.withLock({ $0.prompter }) { return chosen }
        if let terminal = TerminalPrompter() { return terminal }
        if member == .individual, let askpass = AskpassPrompter.fromEnvironment() { return askpass }
        return StandardInputPrompter()
    }

    /// The Guard's explanation of the last failure (what to fix), if any.
    public var lastErrorMessage: String? { state.withLock { $0.lastErrorMessage } }

    /// The status now and after every change, as an asynchronous sequence.
    public var authorizationStatusUpdates: AsyncStream<AuthorizationStatus> { $authorizationStatus.values }

    /// Requests authorization to provide parental controls for a child or an individual.
    ///
    /// A child's parent or guardian authenticates; an individual authenticates
    /// themself. Once approved, later calls return at once without prompting.
    /// When the call returns, ``authorizationStatus`` holds the outcome.
    /// - Throws: ``FamilyControlsError``.
    public func requestAuthorization(for member: FamilyControlsMember) async throws {
        let (backend, generation) = state.withLock { ($0.backend, $0.generation) }
        switch await backend.request(member, prompter: prompter(for: member)) {
        case .success(let status):
            await settle(status, follow: true, generation: generation)
        case .failure(let failure):
            record(failure, generation: generation)
            if let status = failure.resultingStatus {
                await settle(status, follow: false, generation: generation)
            }
            throw failure.error
        }
    }

    /// Requests authorization for a child, calling `completionHandler` with the outcome.
    ///
    /// Called on the main actor, the handler runs on the main actor; called
    /// elsewhere, on a task of the library's.
    ///
    /// Deprecated as Apple's is, from iOS 16 only: on Linux, as for an app
    /// that supports iOS 15, the call compiles without a warning.
    @available(iOS, deprecated: 16.0, message: "Use requestAuthorization(for:) instead.")
    public func requestAuthorization(completionHandler: @escaping (Result<Void, any Error>) -> Void) {
        let completion = CompletionDelivery(completionHandler)
        Task {
            do {
                try await requestAuthorization(for: .child)
                await completion.deliver(.success(()))
            } catch {
                await completion.deliver(.failure(error))
            }
        }
    }

    /// Revokes authorization to provide parental controls. No effect on a denied app.
    /// The result says whether the request completed, not the authorization state.
    ///
    /// A child's approval is lifted only after a parent or guardian
    /// authenticates, through ``prompter``, as for the approval. Called on the
    /// main actor, the handler runs on the main actor; called elsewhere, on a
    /// task of the library's.
    public func revokeAuthorization(completionHandler: @escaping (Result<Void, any Error>) -> Void) {
        let completion = CompletionDelivery(completionHandler)
        let (backend, generation) = state.withLock { ($0.backend, $0.generation) }
        let prompter = self.prompter
        Task {
            switch await backend.revoke(prompter: prompter) {
            case .success:
                await stopFollowing(resetting: true, generation: generation)
                await completion.deliver(.success(()))
            case .failure(let failure):
                record(failure, generation: generation)
                await completion.deliver(.failure(failure.error))
            }
        }
    }

    /// Makes the center talk to `backend` from now on, as a fresh process
    /// would: not determined, not following, no prompter chosen, no error
    /// message. Results of calls still under way are dropped.
    @MainActor package func replaceBackend(with backend: any AuthorizationBackend) {
        let follower = state.withLock { state in
            defer {
                state.backend = backend
                state.generation += 1
                state.prompter = nil
                state.follower = nil
                state.lastErrorMessage = nil
                state.monitor = nil
            }
            return state.follower
        }
        follower?.stop()
        publish(.notDetermined)
    }

    /// The backend now and its generation, for the calls of extensions.
    var currentBackend: (backend: any AuthorizationBackend, generation: Int) {
        state.withLock { ($0.backend, $0.generation) }
    }

    /// The Guard's answer to `IdentifyMonitor` kept for this backend, if it gave one.
    func knownMonitor(generation: Int) -> MonitorAnswer? {
        state.withLock { $0.generation == generation ? $0.monitor : nil }
    }

    /// Keeps the Guard's answer to `IdentifyMonitor` for the rest of the process.
    func remember(_ answer: MonitorAnswer, generation: Int) {
        state.withLock { state in
            if state.generation == generation { state.monitor = answer }
        }
    }

    func record(_ failure: GuardFailure, generation: Int) {
        state.withLock { state in
            if state.generation == generation { state.lastErrorMessage = failure.message }
        }
    }

    /// The value of a call, or its failure recorded for ``lastErrorMessage`` and thrown as the public error.
    func settled<T>(_ result: Result<T, GuardFailure>, generation: Int) throws -> T {
        switch result {
        case .success(let value): return value
        case .failure(let failure):
            record(failure, generation: generation)
            throw failure.error
        }
    }

    /// Sets the status and, after a success, follows the backend's changes.
    @MainActor private func settle(_ status: AuthorizationStatus, follow: Bool, generation: Int) {
        guard state.withLock({ $0.generation == generation }) else { return }
        publish(status)
        guard follow else { return }
        let backend: (any AuthorizationBackend)? = state.withLock { $0.follower == nil ? $0.backend : nil }
        guard let backend else { return }
        let follower = backend.follow { [weak self] status in
            self?.followed(status, generation: generation)
        }
        state.withLock { $0.follower = follower }
    }

    /// A change the backend reported, from any thread.
    private func followed(_ status: AuthorizationStatus, generation: Int) {
        Task { @MainActor in self.applyFollowed(status, generation: generation) }
    }

    @MainActor private func applyFollowed(_ status: AuthorizationStatus, generation: Int) {
        // A revoke that completed meanwhile ends following; late updates are dropped.
        guard state.withLock({ $0.follower != nil && $0.generation == generation }) else { return }
        publish(status)
    }

    @MainActor private func stopFollowing(resetting: Bool, generation: Int) {
        let follower: (any StatusFollowing)? = state.withLock { state in
            guard state.generation == generation else { return nil }
            defer { state.follower = nil }
            return state.follower
        }
        follower?.stop()
        guard resetting, state.withLock({ $0.generation == generation }) else { return }
        // A revoked app goes back to not determined; a denied one stays denied.
        if authorizationStatus == .approved {
            publish(.notDetermined)
        }
    }

    /// The one place the status changes: `objectWillChange` first, then the
    /// value, then `$authorizationStatus` subscribers, all on the main actor.
    @MainActor private func publish(_ status: AuthorizationStatus) {
        guard authorizationStatus != status else { return }
        objectWillChange.send()
        authorizationStatus = status
    }
}
