#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Varlink

/// A blocking Varlink client over a Unix stream socket.
///
/// Not thread-safe: one owner at a time, which suits an app's helper thread or a
/// command-line tool. To end a blocking wait from elsewhere, share
/// ``interrupter``. Replies arrive in the order calls were made; a call with
/// `more` receives replies until one lacks `continues`, and `oneway` calls may
/// be sent in between.
package final class VarlinkClient {
    /// The socket path, or a label for an adopted socket.
    package let path: String
    /// The largest reply frame accepted, in bytes.
    package let maximumFrameSize: Int
    /// How long a receive waits when it is given no timeout of its own; nil waits indefinitely.
    package var replyTimeout: Duration?
    /// Interrupts a blocking wait from another thread.
    package let interrupter: VarlinkClientInterrupter

    let socket: FileDescriptor
    var reader: FrameReader
    var received: [Result<VarlinkReply, VarlinkClientError>] = []
    var receivedIndex = 0
    let receiveBuffer: UnsafeMutableRawBufferPointer
    /// Once set, every operation fails with it: the connection is unusable.
    var terminalError: VarlinkClientError?
    /// The socket's `SO_RCVTIMEO`, once set (see `receiveMore`).
    var receiveTimeout: Duration?

    static let receiveBufferSize = 16 * 1024

    /// Connects to the service listening at `path` (`connect(2)`).
    /// - Parameters:
    ///   - connectTimeout: how long to wait while the service's accept queue is full.
    ///   - replyTimeout: default wait for each reply; nil waits indefinitely.
    ///   - maximumFrameSize: the largest reply accepted.
    /// - Throws: ``VarlinkClientError`` — `noSuchSocket`, `connectionRefused`,
    ///   `permissionDenied`, `connectTimedOut`, `invalidSocketPath` or `connectFailed`.
    package convenience init(
        path: String,
        connectTimeout: Duration = .seconds(5),
        replyTimeout: Duration? = nil,
        maximumFrameSize: Int = FrameReader.defaultMaximumFrameSize
    ) throws(VarlinkClientError) {
        let socket = try Self.connect(to: path, timeout: connectTimeout)
        self.init(connectedSocket: socket, label: path, replyTimeout: replyTimeout, maximumFrameSize: maximumFrameSize)
    }

    /// Uses an already connected stream socket (one end of a `socketpair(2)`,
    /// or a socket passed in by a parent process). The socket must be blocking.
    package init(
        connectedSocket: FileDescriptor,
        label: String,
        replyTimeout: Duration? = nil,
        maximumFrameSize: Int = FrameReader.defaultMaximumFrameSize
    ) {
        socket = connectedSocket
        path = label
        self.replyTimeout = replyTimeout
        self.maximumFrameSize = maximumFrameSize
        reader = FrameReader(maximumFrameSize: maximumFrameSize)
        interrupter = VarlinkClientInterrupter(descriptor: connectedSocket.rawValue)
        receiveBuffer = .allocate(byteCount: Self.receiveBufferSize, alignment: 16)
    }

    deinit {
        close()
        receiveBuffer.deallocate()
    }

    /// Closes the connection; later operations fail with ``VarlinkClientError/clientClosed``.
    /// The service sees a hang-up. Calling it again does nothing.
    package func close() {
        guard terminalError != .clientClosed else { return }
        terminalError = .clientClosed
        interrupter.detach()
        socket.close()
    }

    /// Who listens at the other end, as the kernel recorded it when the
    /// connection was made (`SO_PEERCRED`); nil when it cannot be read.
    package var peerCredentials: PeerCredentials? {
        guard terminalError == nil else { return nil }
        return try? Socket.peerCredentials(of: socket.rawValue)
    }

    /// Whether ``close()`` was called or the connection failed for good.
    package var isClosed: Bool { terminalError != nil }

    /// Records a failure that leaves the connection unusable, and returns it for throwing.
    func fail(_ error: VarlinkClientError) -> VarlinkClientError {
        if terminalError == nil {
            terminalError = error
            interrupter.detach()
            socket.close()
        }
        return error
    }
}
