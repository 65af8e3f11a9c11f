import Synchronization
import SystemKit
import Varlink

/// Pending calls, and the backpressure they exert: a connection with as many
/// calls pending as it may is not read until one finishes, so a client that
/// sends calls faster than they are answered waits with them in its own socket
/// buffer instead of the server's memory.
extension VarlinkConnection {
    /// Counts a call the service goes on with after its handler returns as
    /// pending until the returned token finishes. Take it inside the handler,
    /// before handing the work on; finish it when the call is answered, or when
    /// it has become a stream that only waits for events (the service bounds
    /// those itself). Safe from any thread.
    package func beginPendingCall() -> VarlinkPendingCall {
        output.withLock { $0.pendingCalls += 1 }
        return VarlinkPendingCall(connection: self)
    }

    /// Calls begun with ``beginPendingCall()`` and not yet finished.
    package var pendingCallCount: Int { output.withLock { $0.pendingCalls } }

    /// Close callbacks registered with ``onClose(_:)`` and not yet run.
    package var closeCallbackCount: Int { output.withLock { $0.closeCallbacks.count } }

    func finishPendingCall() {
        let limit = core.configuration.maximumPendingCallsPerConnection
        let resume = output.withLock { output in
            output.pendingCalls -= 1
            guard output.readingPaused, !output.resumeRequested, !output.closing,
                  output.pendingCalls < limit else { return false }
            output.resumeRequested = true
            return true
        }
        if resume { core.requestResume(self) }
    }

    // MARK: Loop thread only

    /// Whether the loop may dispatch another call now.
    var admitsCall: Bool {
        let limit = core.configuration.maximumPendingCallsPerConnection
        return output.withLock { $0.pendingCalls < limit }
    }

    /// Whether the loop has stopped watching the connection for input.
    var isReadingPaused: Bool { output.withLock { $0.readingPaused } }

    /// Stops watching for input while the connection has as many pending calls
    /// as it may, and watches again once it has fewer.
    /// - Returns: whether reading is paused.
    /// - Throws: when epoll refuses the change; the connection must close.
    func pauseReadingWhileBusy() throws(Errno) -> Bool {
        let limit = core.configuration.maximumPendingCallsPerConnection
        return try output.withLock { output throws(Errno) -> Bool in
            let busy = output.pendingCalls >= limit
            guard busy != output.readingPaused, !output.closed else { return busy }
            output.readingPaused = busy
            try output.updateInterest(core.epoll, token: id)
            return busy
        }
    }

    /// Takes note that the loop is acting on a resume request, so the next
    /// finished call may ask again.
    func takeResumeRequest() {
        output.withLock { $0.resumeRequested = false }
    }
}
