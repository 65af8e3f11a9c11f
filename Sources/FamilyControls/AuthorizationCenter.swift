import Foundation
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
/// ``authorizationStatus`` is main-actor isolated, as Apple asks for the main queue.
@MainActor
public final class AuthorizationCenter: PublishingObservable {
    /// The shared center for requesting and revoking authorization.
    public nonisolated static let shared = AuthorizationCenter()

    public nonisolated let observationRegistrar = ObservationRegistrar()

    /// The status of your app's authorization to provide parental controls.
    ///
    /// Always `.notDetermined` at first; set after a request succeeds (or to
    /// `.denied` after "Don't Allow"), then kept up to date with the Guard
    /// until a revoke succeeds or the app exits.
    @Published public private(set) var authorizationStatus: AuthorizationStatus = .notDetermined

    private struct Settings {
        var prompter: (any Prompter)?
        var follower: StatusFollower?
        var lastErrorMessage: String?
    }
    private nonisolated let settings = Mutex(Settings())

    nonisolated init() {}

    /// What shows the alert and the authentication sheet. Defaults to the
    /// terminal when there is one, else the `FAMILYCONTROLS_ASKPASS` program,
    /// else standard input.
    public nonisolated var prompter: any Prompter {
        get {
            if let chosen = settings.withLock({ $0.prompter }) { return chosen }
            if let terminal = TerminalPrompter() { return terminal }
            if let askpass = AskpassPrompter.fromEnvironment() { return askpass }
            return StandardInputPrompter()
        }
        set { settings.withLock { $0.prompter = newValue } }
    }

    /// The Guard's explanation of the last failure (what to fix), if any.
    public nonisolated var lastErrorMessage: String? { settings.withLock { $0.lastErrorMessage } }

    /// The status now and after every change, as an asynchronous sequence.
    public var authorizationStatusUpdates: AsyncStream<AuthorizationStatus> { $authorizationStatus.values }

    /// Requests authorization to provide parental controls for a child or an individual.
    ///
    /// A child's parent or guardian authenticates; an individual authenticates
    /// themself. Once approved, later calls return at once without prompting.
    /// - Throws: ``FamilyControlsError``.
    public nonisolated func requestAuthorization(for member: FamilyControlsMember) async throws {
        let prompter = self.prompter
        let outcome: Result<AuthorizationStatus, GuardClientFailure> = await Self.onOwnThread {
            do throws(GuardClientFailure) {
                return .success(try GuardClient.request(member, prompter: prompter))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let status):
            await setStatus(status, follow: true)
        case .failure(let failure):
            settings.withLock { $0.lastErrorMessage = failure.message }
            if let status = failure.resultingStatus {
                await setStatus(status, follow: false)
            }
            throw failure.error
        }
    }

    /// Requests authorization for a child, calling `completionHandler` with the outcome.
    @available(*, deprecated, message: "Use requestAuthorization(for:) instead.")
    public nonisolated func requestAuthorization(completionHandler: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        Task {
            do {
                try await requestAuthorization(for: .child)
                completionHandler(.success(()))
            } catch {
                completionHandler(.failure(error))
            }
        }
    }

    /// Revokes authorization to provide parental controls. No effect on a denied app.
    /// The result says whether the request completed, not the authorization state.
    ///
    /// A child's approval is lifted only after a parent or guardian
    /// authenticates, through ``prompter``, as for the approval.
    public nonisolated func revokeAuthorization(completionHandler: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let prompter = self.prompter
        Task {
            let outcome: Result<Void, GuardClientFailure> = await Self.onOwnThread {
                do throws(GuardClientFailure) {
                    try GuardClient.revoke(prompter: prompter)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success:
                await stopFollowing(resetting: true)
                completionHandler(.success(()))
            case .failure(let failure):
                settings.withLock { $0.lastErrorMessage = failure.message }
                completionHandler(.failure(failure.error))
            }
        }
    }

    /// Sets the status and, after a success, follows the Guard's changes.
    private func setStatus(_ status: AuthorizationStatus, follow: Bool) {
        authorizationStatus = status
        guard follow else { return }
        let alreadyFollowing = settings.withLock { $0.follower != nil }
        guard !alreadyFollowing else { return }
        let follower = StatusFollower { status in
            Task { @MainActor in AuthorizationCenter.shared.followed(status) }
        }
        settings.withLock { $0.follower = follower }
    }

    private func followed(_ status: AuthorizationStatus) {
        // A revoke that completed meanwhile ends following; late updates are dropped.
        guard settings.withLock({ $0.follower != nil }) else { return }
        authorizationStatus = status
    }

    private func stopFollowing(resetting: Bool) {
        let follower = settings.withLock { settings in
            defer { settings.follower = nil }
            return settings.follower
        }
        follower?.stop()
        // A revoked app goes back to not determined; a denied one stays denied.
        if resetting && authorizationStatus == .approved { authorizationStatus = .notDetermined }
    }

    /// Runs blocking work on a new thread (never the cooperative pool) and awaits it.
    private nonisolated static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "FamilyControls request"
            thread.start()
        }
    }
}
