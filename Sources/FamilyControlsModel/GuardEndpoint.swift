#if canImport(Glibc)
import Glibc
#endif

/// Where and how the Guard is reached: the one definition the library, the
/// Guard and `familyctl` share.
package enum GuardEndpoint {
    /// The Guard's socket when nothing else is said.
    package static let defaultSocket = "/run/familycontrols/guard.socket"
    /// The environment variable naming another socket (tests, sandboxes).
    package static let socketVariable = "FAMILYCONTROLS_SOCKET"
    /// The Varlink interface the Guard serves.
    package static let interface = "org.familycontrols.guard"

    /// `name` qualified by the interface: `org.familycontrols.guard.NAME`.
    package static func qualified(_ name: String) -> String { interface + "." + name }

    /// The socket: `option` when given, else ``socketVariable`` when set and
    /// not empty, else ``defaultSocket``.
    package static func socketPath(option: String? = nil) -> String {
        if let option { return option }
        return ProcessVariables.value(socketVariable) ?? defaultSocket
    }
}

/// The version of the FamilyControls tools.
package enum FamilyControlsVersion {
    package static let string = "0.1.0"
}
