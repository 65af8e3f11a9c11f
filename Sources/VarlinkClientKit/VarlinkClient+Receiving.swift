#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Varlink

extension VarlinkClient {
    /// Waits for the next reply, in the order calls were made.
    /// - Parameter timeout: overrides ``replyTimeout``; nil with no
    ///   ``replyTimeout`` waits indefinitely.
    /// - Returns: the reply; check ``VarlinkReply/continues`` during a stream.
    /// - Throws: ``VarlinkClientError``: `.remote` for an error reply (which ends
    ///   the call); `.timedOut` when nothing arrived in time (nothing is lost:
    ///   waiting again is fine); `.connectionClosed`, `.interrupted`,
    ///   `.invalidReply` or `.replyTooLarge`, after which the client is closed.
    package func receiveReply(timeout: Duration? = nil) throws(VarlinkClientError) -> VarlinkReply {
        let wait = timeout ?? replyTimeout
        let deadline = wait.map { MonotonicInstant.now + $0 }
        while receivedIndex == received.count {
            if let terminalError { throw terminalError }
            try receiveMore(until: deadline)
        }
        let next = received[receivedIndex]
        receivedIndex += 1
        if receivedIndex == received.count {
            received.removeAll(keepingCapacity: true)
            receivedIndex = 0
        }
        let reply = try next.get()
        if let failure = reply.failure { throw .remote(failure) }
        return reply
    }

    /// Reads once from the socket and queues every reply completed by it.
    private func receiveMore(until deadline: MonotonicInstant?) throws(VarlinkClientError) {
        if let deadline, !mayWaitInReceive(until: deadline) {
            let ready: Int16?
            do { ready = try Poll.wait(for: Int16(POLLIN), on: socket.rawValue, until: deadline) } catch {
                throw fail(.system(error))
            }
            guard ready != nil else { throw .timedOut }
        }
        let count = recv(socket.rawValue, receiveBuffer.baseAddress, receiveBuffer.count, 0)
        if count < 0 {
            switch errno {
            // Not retried here, by design: recv was interrupted, or found
            // nothing, only because nothing had arrived, and a blocking retry
            // could outlast the deadline. The caller's loop checks the
            // deadline and polls again.
            case EINTR, EAGAIN: return
            case ECONNRESET: throw fail(interrupter.wasInterrupted ? .interrupted : .connectionClosed)
            default: throw fail(.system(Errno.current("recv")))
            }
        }
        if count == 0 { throw fail(interrupter.wasInterrupted ? .interrupted : .connectionClosed) }
        do {
            try reader.consume(UnsafeRawBufferPointer(rebasing: receiveBuffer[..<count])) { frame in
                do throws(VarlinkMessageError) {
                    received.append(.success(try VarlinkReply(parsing: frame)))
                    return true
                } catch {
                    received.append(.failure(fail(.invalidReply(error))))
                    return false
                }
            }
        } catch {
            throw fail(.replyTooLarge(limit: maximumFrameSize))
        }
    }

    /// Whether `recv` itself may wait for the reply: the socket's receive
    /// timeout (`SO_RCVTIMEO`, set once to ``replyTimeout``) is asked to end no
    /// later than 1 ms after `deadline`. A call's first read is such a wait, one
    /// system call instead of `poll` and `recv`; a later read of the same reply,
    /// with less time left, polls. The kernel's timer wheel may end a long wait
    /// late, by up to about an eighth of it (a Guard that never answers is
    /// given up on at about 135 s instead of 120): the price of the shorter
    /// round trip, paid only when the service has stopped answering.
    private func mayWaitInReceive(until deadline: MonotonicInstant) -> Bool {
        // A zero SO_RCVTIMEO would wait for good.
        guard let replyTimeout, replyTimeout > .milliseconds(1) else { return false }
        if receiveTimeout != replyTimeout {
            let (seconds, attoseconds) = replyTimeout.components
            var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            guard setsockopt(socket.rawValue, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
                return false
            }
            receiveTimeout = replyTimeout
        }
        return MonotonicInstant.now.duration(to: deadline) >= replyTimeout - .milliseconds(1)
    }
}
