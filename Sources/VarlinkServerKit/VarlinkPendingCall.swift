import Synchronization
import Varlink

/// A call its service goes on with after the handler returned (on a queue, on
/// a thread): until ``finish()``, it counts against the connection's
/// ``VarlinkServerConfiguration/maximumPendingCallsPerConnection``.
///
/// Made by ``VarlinkConnection/beginPendingCall()``. Finishing twice is
/// harmless, and a token released unfinished finishes itself, so a dropped
/// piece of work never keeps its connection from being read.
package final class VarlinkPendingCall: Sendable {
    private let connection: VarlinkConnection
    private let finished = Atomic<Bool>(false)

    init(connection: VarlinkConnection) {
        self.connection = connection
    }

    deinit { finish() }

    /// Ends the call's claim on its connection, which the server may then read
    /// again if it was waiting for room. Safe from any thread.
    package func finish() {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        connection.finishPendingCall()
    }
}
