import SystemKit
import Varlink

/// A connection's outgoing side, guarded by the connection's mutex: the bytes
/// not yet written, the flags that say who may write and when, and what epoll
/// watches for (room to write, and input unless the connection is busy).
struct ConnectionOutput {
    /// The socket, or -1 once the loop has closed it: a thread holding the
    /// mutex and seeing a descriptor knows it is still this connection's.
    var descriptor: CInt
    var buffer: [UInt8] = []
    var sentOffset = 0
    /// Set while the loop dispatches a batch of calls, so their replies leave
    /// in one write when the batch ends.
    var corked = false
    /// Whether epoll also reports writability (output is waiting for room).
    var watchingWritable = false
    /// No more output is accepted; the loop has been asked to close.
    var closing = false
    /// The loop has closed the socket.
    var closed = false
    var closeCallbacks: [@Sendable () -> Void] = []
    /// Calls the service goes on with after its handler returned (see
    /// ``VarlinkConnection/beginPendingCall()``).
    var pendingCalls = 0
    /// The loop stopped watching for input: ``pendingCalls`` reached the limit.
    var readingPaused = false
    /// The loop has been asked to read again and has not done so yet.
    var resumeRequested = false

    var pendingCount: Int { buffer.count - sentOffset }

    init(descriptor: CInt) { self.descriptor = descriptor }

    enum FlushOutcome {
        /// Everything was written, or the rest waits for writability.
        case ok
        /// The peer is gone or the socket failed.
        case failed(Errno)
    }

    /// Writes what the socket takes now, without blocking; the rest waits for
    /// epoll to report room.
    mutating func flush(_ epoll: Epoll, token: UInt64) -> FlushOutcome {
        guard descriptor >= 0 else { return .ok }
        while pendingCount > 0 {
            let sent: Int
            switch Self.send(descriptor, buffer, from: sentOffset) {
            case .success(let count): sent = count
            case .failure(let error): return .failed(error)
            }
            if sent == 0 { return watchWritable(true, epoll, token: token) }
            sentOffset += sent
        }
        // Keep a modest buffer for the next replies; give a big one back.
        buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
        sentOffset = 0
        return watchWritable(false, epoll, token: token)
    }

    /// Sends what the socket takes of `bytes[offset...]` without blocking.
    static func send(_ descriptor: CInt, _ bytes: [UInt8], from offset: Int) -> Result<Int, Errno> {
        bytes.withUnsafeBytes { raw in
            Result { () throws(Errno) in
                try Socket.sendNonBlocking(descriptor, UnsafeRawBufferPointer(rebasing: raw[offset...]))
            }
        }
    }

    /// Appends `frame`, first dropping already-written bytes when they would
    /// otherwise pile up ahead of the unwritten ones.
    mutating func append(_ frame: [UInt8]) {
        if sentOffset > 64 * 1024, sentOffset * 2 > buffer.count {
            buffer.removeFirst(sentOffset)
            sentOffset = 0
        }
        buffer.append(contentsOf: frame)
    }

    private mutating func watchWritable(_ watch: Bool, _ epoll: Epoll, token: UInt64) -> FlushOutcome {
        guard watch != watchingWritable else { return .ok }
        watchingWritable = watch
        do { try updateInterest(epoll, token: token) } catch { return .failed(error) }
        return .ok
    }

    /// What epoll reports for the connection: input unless reading is paused
    /// (hang-ups and errors come regardless), and room to write while output waits.
    var interest: EpollEvents {
        var events: EpollEvents = readingPaused ? [] : [.readable, .readHangUp]
        if watchingWritable { events.insert(.writable) }
        return events
    }

    /// Tells epoll the current ``interest``.
    func updateInterest(_ epoll: Epoll, token: UInt64) throws(Errno) {
        guard descriptor >= 0 else { return }
        try epoll.modify(descriptor, events: interest, data: token)
    }
}
