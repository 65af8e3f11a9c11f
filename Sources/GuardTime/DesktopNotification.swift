#if canImport(Glibc)
import Glibc
#endif
internal import CSDBus
import SystemKit

/// The Guard's own program as a short helper run as the child in their
/// session (`familycontrolsd --notify-session SUMMARY BODY`): posts one
/// desktop notification on the session bus its environment names, and exits.
/// The child's session bus is theirs to reach; the Guard, root, never
/// connects to it.
package enum DesktopNotification {
    /// The first argument that makes the Guard's program this helper.
    package static let modeArgument = "--notify-session"
    /// The longest summary and body posted, in bytes.
    static let textLimit = 1024

    /// Posts `arguments` (summary, body) and returns the exit status: 0
    /// when the server took it, 1 when there is no session bus or no
    /// server, 2 on a wrong command line.
    package static func main(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2, arguments.allSatisfy({ $0.utf8.count <= textLimit }) else {
            writeToStandardError("familycontrolsd \(modeArgument): SUMMARY BODY, each at most \(textLimit) bytes\n")
            return 2
        }
        var handle: OpaquePointer?
        let opened = csdbus_notifier_open(&handle, 3000)
        guard opened == 0, let handle else {
            writeToStandardError("familycontrolsd \(modeArgument): no notification server on the session bus (\(-opened))\n")
            return 1
        }
        defer { csdbus_notifier_free(handle) }
        var id: UInt32 = 0
        let posted = csdbus_notify(handle, 0, arguments[0], DisplayText.markupEscaped(arguments[1]), 0, 0, &id)
        return posted == 0 ? 0 : 1
    }
}
