import Synchronization
import SystemKit
import Varlink

/// One client connection, as a service sees it: who the peer is, and how to
/// reply.
///
/// Thread-safe: replies may be sent from any thread and leave in the order
/// they were sent. A reply is written at once when the socket has room; what
/// does not fit waits for the loop to report writability.
package final class VarlinkConnection: Sendable, CustomStringConvertible {
    /// A number unique among this server's connections, for logs.
    package let id: UInt64
    /// The peer process, from the kernel at accept time.
    package let peer: VarlinkPeer

    let core: ServerCore
    let output: Mutex<ConnectionOutput>
    private let storage = Mutex<(any Sendable)?>(nil)

    init(id: UInt64, peer: VarlinkPeer, descriptor: CInt, core: ServerCore) {
        self.id = id
        self.peer = peer
        self.core = core
        output = Mutex(ConnectionOutput(descriptor: descriptor))
    }

    package var description: String { "connection \(id) (\(peer.credentials))" }

    /// Sends a successful reply; `continues: true` promises more replies to the
    /// same call (only for calls with `more`). Dropped once the connection is closed.
    package func reply(_ parameters: JSONObject = [:], continues: Bool = false) {
        send(VarlinkReply(parameters: parameters, continues: continues).encoded())
    }

    /// Sends an error reply, which ends the call.
    package func fail(_ error: VarlinkError) {
        send(VarlinkReply(failure: error).encoded())
    }

    /// Sends an error reply named `name` (qualified, such as `com.example.NotAllowed`).
    package func fail(_ name: String, parameters: JSONObject = [:]) {
        fail(VarlinkError(name: name, parameters: parameters))
    }

    /// Closes the connection after writing what is queued, as far as the socket
    /// takes it without waiting. Later replies are dropped. Safe from any thread.
    package func close() {
        let first = output.withLock { output in
            guard !output.closing else { return false }
            output.closing = true
            return true
        }
        if first { core.requestClose(self) }
    }

    /// Whether the connection is closed or closing: replies would be dropped.
    package var isClosed: Bool { output.withLock { $0.closing || $0.closed } }

    /// Runs `body` once when the connection closes for any reason (hang-up,
    /// protocol error, ``close()``, server shutdown), on the loop thread; at once
    /// on the calling thread if it is already closed. `body` must not block.
    package func onClose(_ body: @escaping @Sendable () -> Void) {
        let alreadyClosed = output.withLock { output in
            guard !output.closed else { return true }
            output.closeCallbacks.append(body)
            return false
        }
        if alreadyClosed { body() }
    }

    /// A slot for the service's per-connection state (a session, subscriptions).
    package var attachment: (any Sendable)? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    /// Reads and changes ``attachment`` atomically. `body` must not call back
    /// into ``attachment`` (the lock is not recursive).
    package func withAttachment<Result: Sendable>(_ body: (inout (any Sendable)?) -> Result) -> Result {
        storage.withLock { value in body(&value) }
    }
}
