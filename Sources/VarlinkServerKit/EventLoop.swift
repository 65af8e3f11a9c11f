#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Varlink

/// The server's epoll loop. Lives on its own thread and owns everything loop-side:
/// the listening socket, each connection's socket and frame reader.
///
/// Not thread-safe: only the loop thread touches it. Other threads reach the
/// loop through ``ServerCore``.
final class EventLoop {
    /// A connection's loop-side state.
    final class Channel {
        let socket: FileDescriptor
        var reader: FrameReader
        let connection: VarlinkConnection
        /// Whether reading ever paused for pending calls (logged once).
        var hasPaused = false

        init(socket: FileDescriptor, reader: FrameReader, connection: VarlinkConnection) {
            self.socket = socket
            self.reader = reader
            self.connection = connection
        }
    }

    let core: ServerCore
    let router: ServiceRouter
    let listener: FileDescriptor
    var channels: [UInt64: Channel] = [:]
    var nextToken = ServerCore.firstConnectionToken
    /// One read buffer for all connections: an idle connection holds no buffer.
    let readBuffer: UnsafeMutableRawBufferPointer
    private let events = EpollEventBuffer(capacity: 256)
    /// A spare descriptor, given up to accept-and-close one client when the
    /// descriptor table is full, so the listener does not stay readable forever.
    var spareDescriptor: FileDescriptor?
    /// Log "at the connection limit" once per episode, not once per client.
    var atConnectionLimit = false
    /// Open connections per user ID, for the per-user limit.
    var connectionsByUser: [UInt32: Int] = [:]
    /// Users at their limit, to log once per episode.
    var usersAtLimit: Set<UInt32> = []
    var loggedMissingPIDFD = false

    static let readBufferSize = 64 * 1024

    init(core: ServerCore, router: ServiceRouter, listener: FileDescriptor) {
        self.core = core
        self.router = router
        self.listener = listener
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        spareDescriptor = try? FileDescriptor.open("/dev/null", O_RDONLY)
    }

    deinit { readBuffer.deallocate() }

    var logger: Logger { core.logger }

    /// Runs until ``ServerCore/requestStop()``, then closes every connection.
    func run() {
        var stopping = false
        let quiet = core.configuration.whenQuiet
        // When the quiet action is due; nil once it ran, until the next event.
        var quietDue = quiet.map { MonotonicInstant.now.advanced(by: $0.after) }
        while !stopping {
            let count: Int
            do {
                count = try core.epoll.wait(into: events, timeout: quietDue.map(Self.milliseconds(until:)) ?? -1)
            } catch {
                logger.error("event loop stopped: \(error)")
                break
            }
            if let quiet {
                if count > 0 {
                    quietDue = MonotonicInstant.now.advanced(by: quiet.after)
                } else if let due = quietDue, !(MonotonicInstant.now < due) {
                    quiet.run()
                    quietDue = nil
                }
            }
            for index in 0..<count {
                let (ready, token) = events[index]
                switch token {
                case ServerCore.listenerToken:
                    acceptConnections()
                case ServerCore.wakeupToken:
                    stopping = serveRequests() || stopping
                default:
                    // A channel closed earlier in this batch leaves stale events.
                    guard let channel = channels[token] else { continue }
                    serve(channel, ready)
                }
            }
        }
        closeEverything()
    }

    /// `epoll_wait`'s timeout until `instant`, rounded up: 0 once it has passed.
    static func milliseconds(until instant: MonotonicInstant) -> CInt {
        let (seconds, attoseconds) = MonotonicInstant.now.duration(to: instant).components
        guard seconds >= 0, seconds > 0 || attoseconds > 0 else { return 0 }
        return CInt(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    /// Handles what other threads asked for.
    /// - Returns: whether the loop must stop.
    private func serveRequests() -> Bool {
        core.wakeup.drain()
        let requests = core.takeRequests()
        for connection in requests.closing {
            if let channel = channels[connection.id] { close(channel) }
        }
        for connection in requests.resuming {
            if let channel = channels[connection.id] { resumeReading(channel) }
        }
        return requests.stop
    }

    private func serve(_ channel: Channel, _ ready: EpollEvents) {
        if ready.contains(.writable), !channel.connection.writeQueued() {
            return close(channel)
        }
        guard !ready.isDisjoint(with: [.readable, .readHangUp, .hangUp, .error]) else { return }
        if channel.connection.isReadingPaused {
            // Only a hang-up or an error is reported while paused (or input
            // from before the pause): the calls held back can no longer be
            // answered when the peer is gone.
            if !ready.isDisjoint(with: [.hangUp, .error]) { close(channel) }
            return
        }
        read(channel)
    }

    private func closeEverything() {
        try? core.epoll.remove(listener.rawValue)
        listener.close()
        let count = channels.count
        for channel in Array(channels.values) { close(channel) }
        logger.info("stopped; closed \(count) connection\(count == 1 ? "" : "s")")
    }
}
