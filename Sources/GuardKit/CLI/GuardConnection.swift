import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Varlink

/// `familyctl`'s connection to the Guard: one call at a time, errors turned
/// into messages and exit statuses.
struct GuardConnection {
    static let interface = "org.familycontrols.guard"
    let client: VarlinkClient

    /// The socket: `--socket`, else `FAMILYCONTROLS_SOCKET`, else the default.
    static func socketPath(_ option: String?) -> String {
        if let option { return option }
        let environment = ProcessInfo.processInfo.environment["FAMILYCONTROLS_SOCKET"] ?? ""
        return environment.isEmpty ? GuardDaemon.defaultSocket : environment
    }

    init(socket: String) throws(CommandFailure) {
        do throws(VarlinkClientError) {
            client = try VarlinkClient(path: socket, connectTimeout: .seconds(2), replyTimeout: .seconds(120))
        } catch {
            throw CommandFailure(.unavailable, "cannot reach the Guard: \(error) (is familycontrolsd running?)")
        }
    }

    func call(_ method: String, _ parameters: JSONObject = [:]) throws(CommandFailure) -> JSONObject {
        do throws(VarlinkClientError) {
            return try client.call("\(Self.interface).\(method)", parameters: parameters)
        } catch {
            if case .remote(let remote) = error {
                let message = remote.parameters["message"]?.stringValue ?? remote.name
                let code: ExitCode = remote.name.hasSuffix(".PermissionDenied") ? .permission : .failure
                throw CommandFailure(code, message)
            }
            throw CommandFailure(.unavailable, "the Guard did not answer: \(error)")
        }
    }
}
