import Synchronization
import SystemKit
import Varlink

extension VarlinkConnection {
    private enum SendOutcome {
        case done
        case dropped
        case failed(Errno)
        case overflow(Int)
    }

    /// Queues or writes one encoded frame.
    func send(_ frame: [UInt8]) {
        let limit = core.configuration.maximumPendingOutput
        let outcome: SendOutcome = output.withLock { output in
            guard !output.closing else { return .dropped }
            if output.pendingCount == 0, !output.corked {
                // The usual case: nothing queued, so write straight from the frame.
                switch ConnectionOutput.send(output.descriptor, frame, from: 0) {
                case .success(let sent) where sent == frame.count:
                    return .done
                case .success(let sent):
                    output.buffer = frame
                    output.sentOffset = sent
                case .failure(let error):
                    output.closing = true
                    return .failed(error)
                }
            } else {
                output.append(frame)
                if output.pendingCount > limit {
                    let pending = output.pendingCount
                    output.closing = true
                    output.buffer = []
                    output.sentOffset = 0
                    return .overflow(pending)
                }
                if output.corked || output.watchingWritable { return .done }
            }
            if case .failed(let error) = output.flush(core.epoll, token: id) {
                output.closing = true
                return .failed(error)
            }
            return .done
        }
        switch outcome {
        case .done, .dropped:
            break
        case .failed(let error):
            core.logger.debug("\(self): write failed, closing: \(error)")
            core.requestClose(self)
        case .overflow(let pending):
            core.logger.warning("\(self): dropped, \(pending) bytes of replies unread (limit \(limit))")
            core.requestClose(self)
        }
    }

    // MARK: Loop thread only

    /// Holds replies back while the loop dispatches a batch of calls.
    func cork() {
        output.withLock { $0.corked = true }
    }

    /// Writes the batch's replies in one go.
    /// - Returns: false when the socket failed and the connection must close.
    func uncork() -> Bool {
        output.withLock { output in
            output.corked = false
            guard output.pendingCount > 0, !output.watchingWritable, !output.closing else { return true }
            if case .failed = output.flush(core.epoll, token: id) {
                output.closing = true
                return false
            }
            return true
        }
    }

    /// Continues writing once epoll reports room.
    /// - Returns: false when the socket failed and the connection must close.
    func writeQueued() -> Bool {
        output.withLock { output in
            guard !output.closed else { return true }
            if case .failed = output.flush(core.epoll, token: id) {
                output.closing = true
                return false
            }
            return true
        }
    }

    /// Marks the connection closed, after a last non-blocking write of what is
    /// queued. The caller closes the socket afterwards: no other thread will
    /// touch the descriptor once this returns.
    /// - Returns: the close callbacks to run, once.
    func markClosed() -> [@Sendable () -> Void] {
        output.withLock { output in
            guard !output.closed else { return [] }
            if output.pendingCount > 0 {
                _ = ConnectionOutput.send(output.descriptor, output.buffer, from: output.sentOffset)
            }
            output.closed = true
            output.closing = true
            output.descriptor = -1
            output.buffer = []
            output.sentOffset = 0
            let callbacks = output.closeCallbacks
            output.closeCallbacks = []
            return callbacks
        }
    }
}
