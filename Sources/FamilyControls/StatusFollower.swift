#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import GuardProtocol
import Varlink
import VarlinkClientKit

/// Follows the Guard's status for this app (`Subscribe`) on a thread of its
/// own, so an administrator's change or a graduation reaches the app within
/// a second. Reconnects when the Guard restarts.
final class StatusFollower: Sendable {
    private struct State {
        var stopped = false
        var interrupter: VarlinkClientInterrupter?
    }
    private let state = Mutex(State())

    /// Starts following; `update` runs on the follower's thread for every status.
    /// The thread is a loop for the follower's whole life, so it is its own,
    /// not one of the pool's (like the Guard's event loop).
    init(update: @escaping @Sendable (AuthorizationStatus) -> Void) {
        do throws(Errno) {
            try SystemThread.spawn(name: "FC status") { [self] in run(update) }.detach()
        } catch {
            // Without a thread the app keeps the status it read last, and
            // every request still asks the Guard.
            state.withLock { $0.stopped = true }
        }
    }

    /// Stops following; the thread ends at its next wake-up.
    func stop() {
        let interrupter = state.withLock { state in
            state.stopped = true
            return state.interrupter
        }
        interrupter?.interrupt()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func run(_ update: @escaping @Sendable (AuthorizationStatus) -> Void) {
        while !isStopped {
            if let client = try? GuardClient.connect() {
                let stoppedMeanwhile = state.withLock { state in
                    state.interrupter = client.interrupter
                    return state.stopped
                }
                if !stoppedMeanwhile { stream(client, update) }
                state.withLock { $0.interrupter = nil }
                client.close()
            }
            if !isStopped { usleep(250_000) }
        }
    }

    private func stream(_ client: VarlinkClient, _ update: @escaping @Sendable (AuthorizationStatus) -> Void) {
        do throws(VarlinkClientError) {
            try client.startStreaming(Guard.Subscribe.method, parameters: Guard.Subscribe.Parameters().object)
            while !isStopped {
                let reply = try client.receiveReply()
                if reply.failure != nil { return }
                if let subscribed = try? Guard.Subscribe.Reply(reply.parameters, at: "", strict: false) {
                    update(AuthorizationStatus(subscribed.status))
                }
                if !reply.continues { return }
            }
        } catch {
            return
        }
    }
}
