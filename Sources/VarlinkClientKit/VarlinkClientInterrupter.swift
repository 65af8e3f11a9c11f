#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Varlink

/// Ends a ``VarlinkClient``'s blocking wait from another thread.
///
/// The client itself has a single owner; this handle is the one part that may
/// be shared. Interrupting shuts the socket down (`shutdown(2)`), so a blocked
/// receive returns ``VarlinkClientError/interrupted`` and the client is done.
package final class VarlinkClientInterrupter: Sendable {
    private struct State {
        var descriptor: CInt
        var interrupted = false
    }

    private let state: Mutex<State>

    init(descriptor: CInt) {
        state = Mutex(State(descriptor: descriptor))
    }

    /// Interrupts the client's current or next wait. Safe from any thread, any
    /// number of times, before or after the client is closed.
    package func interrupt() {
        state.withLock { state in
            state.interrupted = true
            // The client detaches before closing, so this never hits a reused descriptor.
            if state.descriptor >= 0 { _ = shutdown(state.descriptor, CInt(SHUT_RDWR)) }
        }
    }

    /// Whether ``interrupt()`` has been called.
    package var wasInterrupted: Bool { state.withLock { $0.interrupted } }

    /// Called by the client just before it closes its descriptor.
    func detach() {
        state.withLock { $0.descriptor = -1 }
    }
}
