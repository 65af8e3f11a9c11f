import GuardProtocol
import Synchronization
import SystemKit
import Varlink
import VarlinkClientKit

/// The Guard (`familycontrolsd`) over its socket: what
/// ``AuthorizationCenter/shared`` talks to. The client blocks on people and on
/// the socket, so every call runs on a small pool of threads of its own
/// (``calls``), never on the cooperative pool.
package struct GuardBackend: AuthorizationBackend {
    package init() {}

    /// A child's request waits for a parent or guardian, for minutes maybe:
    /// cancelling the calling task cancels it (the connection is closed, and
    /// the Guard ends the request as canceled).
    package func request(_ member: FamilyControlsMember, prompter: any Prompter) async -> Result<AuthorizationStatus, GuardFailure> {
        let cancellation = Cancellation()
        return await withTaskCancellationHandler {
            await Self.blocking { () throws(GuardFailure) in
                try GuardClient.request(member, prompter: prompter, connected: cancellation.attach)
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    package func revoke(prompter: any Prompter) async -> Result<Void, GuardFailure> {
        let cancellation = Cancellation()
        return await withTaskCancellationHandler {
            await Self.blocking { () throws(GuardFailure) in
                try GuardClient.revoke(prompter: prompter, connected: cancellation.attach)
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    package func update(prompter: any Prompter) async -> Result<AppUpdateOutcome, GuardFailure> {
        let cancellation = Cancellation()
        return await withTaskCancellationHandler {
            await Self.blocking { () throws(GuardFailure) in
                try GuardClient.update(prompter: prompter, connected: cancellation.attach)
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    package var monitorClaim: MonitorClaim? { MonitorClaim.fromEnvironment() }

    package func identifyMonitor() async -> Result<IdentifiedMonitor?, GuardFailure> {
        await Self.blocking { () throws(GuardFailure) in try GuardClient.identifyMonitor() }
    }

    package func follow(_ update: @escaping @Sendable (AuthorizationStatus) -> Void) -> any StatusFollowing {
        StatusFollower(update: update)
    }

    /// Threads for calls that block. An app makes a request or a revoke at a
    /// time, seldom more; past these, calls wait their turn, and past the
    /// queue they fail at once.
    static let calls = BlockingExecutor(name: "FamilyControls", maximumThreads: 4, maximumQueued: 256)

    /// Runs blocking work on ``calls`` and awaits its value or its failure.
    static func blocking<T: Sendable>(
        _ body: @escaping @Sendable () throws(GuardFailure) -> T
    ) async -> Result<T, GuardFailure> {
        do throws(BlockingExecutor.Saturated) {
            return try await calls.run { () -> Result<T, GuardFailure> in
                do throws(GuardFailure) { return .success(try body()) } catch { return .failure(error) }
            }
        } catch {
            return .failure(GuardFailure(.unavailable, "too many calls to the Guard at once in this app; try again"))
        }
    }
}

extension StatusFollower: StatusFollowing {}

/// Ends a call under way when its task is cancelled, whether the
/// cancellation comes before or after the connection is made.
private final class Cancellation: Sendable {
    private struct State {
        var interrupter: VarlinkClientInterrupter?
        var canceled = false
    }
    private let state = Mutex(State())

    func attach(_ interrupter: VarlinkClientInterrupter) {
        let canceled = state.withLock { state in
            state.interrupter = interrupter
            return state.canceled
        }
        if canceled { interrupter.interrupt() }
    }

    func cancel() {
        let interrupter = state.withLock { state in
            state.canceled = true
            return state.interrupter
        }
        interrupter?.interrupt()
    }
}
