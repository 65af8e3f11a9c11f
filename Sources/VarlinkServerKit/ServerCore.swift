import Synchronization
import SystemKit
import Varlink

/// The part of a server that every thread may touch: the epoll instance (other
/// threads ask it to watch for writability), the eventfd that wakes the loop,
/// and the queue of requests the loop carries out when woken.
///
/// Connections keep it alive, so the epoll and eventfd descriptors are never
/// closed while a thread could still use them.
final class ServerCore: Sendable {
    let epoll: Epoll
    let wakeup: EventCounter
    let configuration: VarlinkServerConfiguration
    /// Connections currently held, for the limit and for callers' statistics.
    let connectionCount = Atomic<Int>(0)

    struct Requests {
        var stop = false
        var closing: [VarlinkConnection] = []
        /// Connections whose pending calls fell below the limit while paused.
        var resuming: [VarlinkConnection] = []
    }

    private let requests = Mutex(Requests())

    /// epoll registration data of the listening socket and of the eventfd;
    /// connections use ``firstConnectionToken`` and up.
    static let listenerToken: UInt64 = 0
    static let wakeupToken: UInt64 = 1
    static let firstConnectionToken: UInt64 = 2

    init(configuration: VarlinkServerConfiguration) throws(Errno) {
        epoll = try Epoll()
        wakeup = try EventCounter()
        self.configuration = configuration
        try epoll.add(wakeup.rawValue, events: .readable, data: Self.wakeupToken)
    }

    var logger: Logger { configuration.logger }

    /// Asks the loop to close `connection`. Safe from any thread.
    func requestClose(_ connection: VarlinkConnection) {
        ask { $0.closing.append(connection) }
    }

    /// Asks the loop to read `connection` again. Safe from any thread.
    func requestResume(_ connection: VarlinkConnection) {
        ask { $0.resuming.append(connection) }
    }

    private func ask(_ change: (inout Requests) -> Void) {
        let queued = requests.withLock { requests in
            // After stop the loop has closed everything already.
            guard !requests.stop else { return false }
            change(&requests)
            return true
        }
        if queued { wakeup.signal() }
    }

    /// Asks the loop to close everything and exit. Safe from any thread.
    func requestStop() {
        requests.withLock { $0.stop = true }
        wakeup.signal()
    }

    /// The loop's side: everything asked for since the last call.
    func takeRequests() -> Requests {
        requests.withLock { requests in
            let taken = requests
            requests.closing.removeAll()
            requests.resuming.removeAll()
            return taken
        }
    }
}
