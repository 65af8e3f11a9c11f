import SystemKit
import Varlink

/// How a ``VarlinkServer`` introduces itself and the limits it enforces.
package struct VarlinkServerConfiguration: Sendable {
    /// `GetInfo`'s vendor.
    package var vendor: String
    /// `GetInfo`'s product.
    package var product: String
    /// `GetInfo`'s version.
    package var version: String
    /// `GetInfo`'s url.
    package var url: String
    /// Connections held at once; further ones are accepted and closed at once,
    /// so they fail fast instead of waiting in the kernel's queue.
    package var maximumConnections = 4096
    /// Connections one user may hold at once; further ones from that user are
    /// accepted and closed at once, so no one user can take every connection.
    /// nil: no limit per user.
    package var maximumConnectionsPerUser: Int?
    /// Users the per-user limit does not apply to (root, by default).
    package var usersWithoutConnectionLimit: Set<UInt32> = [0]
    /// The largest call frame accepted; a bigger one closes the connection.
    package var maximumFrameSize = FrameReader.defaultMaximumFrameSize
    /// Parameters that carry secrets (a password answering a prompt). Their
    /// string values reach the service as ``JSONValue/secret(_:)``, never as
    /// `String`, and when any are named, every byte read from a client is
    /// zeroed once it has been parsed.
    package var secretParameters: Set<String> = []
    /// Reply bytes queued for a client that does not read; past it the client is dropped.
    package var maximumPendingOutput = 4 << 20
    /// Calls one connection may have pending: handed on by the service and not
    /// yet finished (see ``VarlinkConnection/beginPendingCall()``). At the limit
    /// the server reads no more from that connection until one finishes; its
    /// further calls wait, unread, in the socket.
    package var maximumPendingCallsPerConnection = 64
    /// Where notable events go (not every call).
    package var logger = Logger(label: "varlink")
    /// Run on the loop's thread once nothing has reached the loop (a call, a
    /// connection, a reply to send) for ``QuietAction/after``: once per quiet
    /// spell, and again only after the next event. nil: nothing is run.
    package var whenQuiet: QuietAction?

    /// What ``whenQuiet`` runs, and after how long.
    package struct QuietAction: Sendable {
        package var after: Duration
        package var run: @Sendable () -> Void

        package init(after: Duration, run: @escaping @Sendable () -> Void) {
            self.after = after
            self.run = run
        }
    }

    /// A configuration with the default limits and a logger labelled `varlink`.
    package init(vendor: String, product: String, version: String, url: String) {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
    }
}
