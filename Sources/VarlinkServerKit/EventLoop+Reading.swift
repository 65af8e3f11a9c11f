#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Varlink

extension EventLoop {
    /// What reading a batch of frames decided about the connection.
    private enum Verdict: Equatable {
        case keepOpen
        /// Stop reading; the connection closes (already asked for, or for `reason`).
        case close(reason: String?)
    }

    /// Reads once (the registration is level-triggered: more data reports
    /// again), then dispatches the complete calls in arrival order.
    func read(_ channel: Channel) {
        let count = recv(channel.socket.rawValue, readBuffer.baseAddress, readBuffer.count, 0)
        if count < 0 {
            let code = errno
            // Not retried here, by design: the socket is non-blocking and its
            // registration level-triggered, so after EAGAIN or EINTR epoll
            // reports it again and the loop serves other connections meanwhile.
            if code == EAGAIN || code == EINTR { return }
            logger.debug("\(channel.connection): read failed: \(Errno(code, operation: "recv"))")
            return close(channel)
        }
        // End of file: the client hung up. A half-close counts too: it looks
        // the same from here, and a streamed call to it would never end.
        if count == 0 { return close(channel) }
        serve(UnsafeRawBufferPointer(rebasing: readBuffer[..<count]), on: channel)
        // What was read may hold a secret; the reader kept its own (wiped) copy of any rest.
        if !core.configuration.secretParameters.isEmpty {
            SecretBytes.zero(UnsafeMutableRawBufferPointer(rebasing: readBuffer[..<count]))
        }
    }

    /// Goes on with a connection whose pending calls fell below the limit:
    /// first the calls held back, then reading.
    func resumeReading(_ channel: Channel) {
        channel.connection.takeResumeRequest()
        serve(UnsafeRawBufferPointer(start: nil, count: 0), on: channel)
    }

    /// Dispatches the complete calls in `bytes`, after those held back, until
    /// the connection has as many pending calls as it may; the rest stays in
    /// the reader and the loop stops reading the connection until calls finish.
    private func serve(_ bytes: UnsafeRawBufferPointer, on channel: Channel) {
        let connection = channel.connection
        connection.cork()
        var verdict = Verdict.keepOpen
        func next(_ frame: UnsafeRawBufferPointer) -> Bool {
            verdict = dispatch(frame, on: connection)
            return verdict == .keepOpen && connection.admitsCall
        }
        do {
            if connection.admitsCall {
                try channel.reader.consume(bytes, next)
            } else {
                channel.reader.holdBack(bytes)
            }
            // Calls finishing on other threads meanwhile make room: serve what
            // is held back before deciding to pause.
            while verdict == .keepOpen {
                if try connection.pauseReadingWhileBusy() {
                    notePause(channel)
                    break
                }
                guard channel.reader.hasBacklog else { break }
                try channel.reader.consumeBacklog(next)
            }
        } catch {
            verdict = .close(reason: "\(error)")
        }
        let written = connection.uncork()
        if case .close(let reason) = verdict {
            if let reason { logger.notice("\(connection): closing: \(reason)") }
            return close(channel)
        }
        if !written { close(channel) }
    }

    /// Logs a connection's first pause: well-behaved clients never reach it.
    private func notePause(_ channel: Channel) {
        guard !channel.hasPaused else { return }
        channel.hasPaused = true
        let limit = core.configuration.maximumPendingCallsPerConnection
        logger.notice("\(channel.connection): \(limit) calls pending, its limit; reading no more until they finish")
    }

    private func dispatch(_ frame: UnsafeRawBufferPointer, on connection: VarlinkConnection) -> Verdict {
        let call: VarlinkCall
        do {
            call = try VarlinkCall(parsing: frame, secretParameters: core.configuration.secretParameters)
        } catch {
            // A JSON object with a bad field gets the standard error first; for
            // garbage there is no call to answer. Either way the stream can no
            // longer be trusted.
            if let field = error.fieldName { connection.fail(.invalidParameter(field)) }
            return .close(reason: "\(error)")
        }
        router.route(call, on: connection)
        return connection.isClosed ? .close(reason: nil) : .keepOpen
    }

    /// Closes `channel` now and runs its close callbacks.
    func close(_ channel: Channel) {
        let connection = channel.connection
        let callbacks = connection.markClosed()
        guard channels.removeValue(forKey: connection.id) != nil else { return }
        // Explicit removal: a forked child may briefly share the descriptor, and
        // epoll forgets it only when every copy is closed.
        try? core.epoll.remove(channel.socket.rawValue)
        channel.socket.close()
        core.connectionCount.subtract(1, ordering: .relaxed)
        forgetConnection(of: connection.peer.uid)
        for callback in callbacks { callback() }
    }
}
