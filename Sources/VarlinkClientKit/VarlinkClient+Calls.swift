#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Varlink

extension VarlinkClient {
    /// Calls `method` and waits for its one reply.
    /// - Parameter timeout: overrides ``replyTimeout`` for this call.
    /// - Returns: the reply's parameters.
    /// - Throws: ``VarlinkClientError``: `.remote` for an error reply (name and
    ///   parameters inside), `.timedOut` (the connection is then closed, since a
    ///   late reply would be mistaken for the next call's), `.connectionClosed`, …
    package func call(
        _ method: String, parameters: JSONObject = [:], timeout: Duration? = nil
    ) throws(VarlinkClientError) -> JSONObject {
        try send(VarlinkCall(method: method, parameters: parameters))
        let reply: VarlinkReply
        do {
            reply = try receiveReply(timeout: timeout)
        } catch .timedOut {
            throw fail(.timedOut)
        }
        guard !reply.continues else {
            throw fail(.protocolViolation("reply to \(method) has \"continues\" but the call did not ask for more"))
        }
        return reply.parameters
    }

    /// Calls `method` with `more`; read the replies with ``receiveReply(timeout:)``
    /// until one has `continues == false`.
    package func startStreaming(_ method: String, parameters: JSONObject = [:]) throws(VarlinkClientError) {
        try send(VarlinkCall(method: method, parameters: parameters, more: true))
    }

    /// Calls `method` with `oneway`: the service sends no reply.
    package func sendOneway(_ method: String, parameters: JSONObject = [:]) throws(VarlinkClientError) {
        try send(VarlinkCall(method: method, parameters: parameters, oneway: true))
    }

    /// Sends `call` as it is, without waiting for anything.
    /// - Throws: ``VarlinkClientError/invalidCall(_:)`` for a malformed call;
    ///   `.connectionClosed` when the service has gone; `.timedOut` when the
    ///   service stopped reading for ``replyTimeout``.
    package func send(_ call: VarlinkCall) throws(VarlinkClientError) {
        if let terminalError { throw terminalError }
        guard VarlinkName.split(qualified: call.method) != nil else {
            throw .invalidCall(.invalidMethodName(call.method))
        }
        guard !(call.oneway && call.more) else { throw .invalidCall(.onewayWithMore) }
        var frame = call.encoded()
        let deadline = replyTimeout.map { MonotonicInstant.now + $0 }
        let result = frame.withUnsafeBytes { bytes in
            Result { () throws(VarlinkClientError) in try writeAll(bytes, deadline: deadline) }
        }
        if call.carriesSecret { frame.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        try result.get()
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer, deadline: MonotonicInstant?) throws(VarlinkClientError) {
        var offset = 0
        while offset < bytes.count {
            let sent: Int
            do {
                sent = try Socket.sendNonBlocking(socket.rawValue, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            } catch {
                if interrupter.wasInterrupted { throw fail(.interrupted) }
                if error.rawValue == EPIPE || error.rawValue == ECONNRESET { throw fail(.connectionClosed) }
                throw fail(.system(error))
            }
            offset += sent
            if sent == 0 {
                // The socket buffer is full: the service is slow to read.
                let ready: Int16?
                do { ready = try Poll.wait(for: Int16(POLLOUT), on: socket.rawValue, until: deadline) } catch {
                    throw fail(.system(error))
                }
                guard ready != nil else { throw fail(.timedOut) }
            }
        }
    }
}
