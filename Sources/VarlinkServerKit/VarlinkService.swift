import Varlink

/// What a ``VarlinkServer`` serves: the interfaces besides
/// `org.varlink.service` (which the server answers itself) and a handler for
/// their calls.
package protocol VarlinkService: Sendable {
    /// Interfaces served besides `org.varlink.service`: name and full
    /// description text. Read once, when the server starts.
    var interfaces: [VarlinkInterfaceDescription] { get }

    /// Handles one call to a method the interfaces declare, on the server's
    /// loop thread, in arrival order per connection.
    ///
    /// Must not block: hand long work (PAM, disk) to another thread and reply
    /// later through `connection`, from any thread, holding a
    /// ``VarlinkConnection/beginPendingCall()`` token until then, so the server
    /// stops reading a connection that sends work faster than it is done.
    /// Reply exactly once, or several times with `continues: true` on all but
    /// the last when `call.more` is set; send nothing for a `call.oneway` (the
    /// client would take it for the reply to its next call). A oneway call may
    /// still cause a reply to an earlier call, such as the next reply of a stream.
    func handle(_ call: VarlinkCall, on connection: VarlinkConnection)
}
