#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import Varlink

/// A Varlink server on a Unix stream socket: one epoll loop on its own thread,
/// non-blocking throughout, so no client can stall another.
///
/// The loop reads calls, answers `org.varlink.service` itself and hands every
/// other call to the ``VarlinkService`` as it arrives, even while earlier
/// calls on the same connection are still being answered, up to
/// ``VarlinkServerConfiguration/maximumPendingCallsPerConnection`` handed-on
/// calls per connection. Replies may come from any thread (see ``VarlinkConnection``).
///
/// Keep a reference for as long as it should serve: releasing it shuts it down.
package final class VarlinkServer: Sendable {
    /// The socket path, for a server that created its socket; nil when adopted.
    package let path: String?
    private let core: ServerCore
    private let thread: SystemThread
    private let stopped = Atomic<Bool>(false)

    /// Creates the socket at `path` with permissions `mode` and starts serving.
    ///
    /// An existing file at `path` is an error: whether it may be removed is the
    /// caller's call (see ``probeSocket(at:)``). The file is left behind at
    /// shutdown, as systemd expects of socket units.
    ///
    /// Each client costs two descriptors (socket and pidfd), so the process's
    /// soft `RLIMIT_NOFILE` is raised, within the hard limit, to cover
    /// ``VarlinkServerConfiguration/maximumConnections``.
    /// - Throws: ``VarlinkServerError``.
    package convenience init(
        listeningOn path: String,
        mode: mode_t = 0o666,
        backlog: CInt = 512,
        configuration: VarlinkServerConfiguration,
        service: any VarlinkService
    ) throws(VarlinkServerError) {
        let listener = try Self.makeListener(path: path, mode: mode, backlog: backlog)
        do {
            try self.init(listener: listener, path: path, configuration: configuration, service: service)
        } catch {
            unlink(path)
            throw error
        }
    }

    /// Serves on an already listening socket, such as one systemd passes in
    /// (`LISTEN_FDS`, descriptor 3 onward). The server takes ownership of it.
    /// - Throws: ``VarlinkServerError/notAListeningSocket(_:)`` for any other kind of descriptor.
    package convenience init(
        adoptingListener descriptor: CInt,
        configuration: VarlinkServerConfiguration,
        service: any VarlinkService
    ) throws(VarlinkServerError) {
        let listener = try Self.adoptListener(descriptor)
        try self.init(listener: listener, path: nil, configuration: configuration, service: service)
    }

    private init(
        listener: sending FileDescriptor,
        path: String?,
        configuration: VarlinkServerConfiguration,
        service: any VarlinkService
    ) throws(VarlinkServerError) {
        // Two descriptors per client (socket and pidfd), plus headroom.
        _ = try? OpenFileLimit.raise(toAtLeast: configuration.maximumConnections * 2 + 256)
        let router = ServiceRouter(service: service, configuration: configuration)
        let core: ServerCore
        do {
            core = try ServerCore(configuration: configuration)
            try core.epoll.add(listener.rawValue, events: .readable, data: ServerCore.listenerToken)
        } catch {
            throw .setupFailed(error)
        }
        do {
            thread = try SystemThread.spawn(name: "varlink-loop") {
                EventLoop(core: core, router: router, listener: listener).run()
            }
        } catch {
            throw .setupFailed(error)
        }
        self.core = core
        self.path = path
        let interfaces = ([VarlinkServiceInterface.name] + router.interfaces.keys.sorted()).joined(separator: ", ")
        configuration.logger.info("listening on \(path ?? "an inherited socket"), serving \(interfaces)")
    }

    deinit { shutdown() }

    /// Connections currently open.
    package var connectionCount: Int { core.connectionCount.load(ordering: .relaxed) }

    /// Stops accepting, closes every connection (running their close callbacks)
    /// and waits for the loop thread to end. Safe to call more than once.
    /// Called from the loop thread itself (inside a handler), it does not wait.
    package func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        core.requestStop()
        if thread.isCurrent {
            thread.detach()
        } else {
            thread.join()
        }
    }
}
