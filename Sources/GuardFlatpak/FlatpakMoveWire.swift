import FamilyConfiguration
import GuardIdentity
import GuardProtocol
import SystemKit
import Varlink

/// One move asked of the Flatpak move service, and its answer, in the
/// service's interface (`Config/org.familycontrols.mover.varlink`, its types
/// generated into ``Mover``): the Guard sends one `MoveApp` call, the
/// service answers one reply and closes, each a Varlink message ended by
/// its NUL, on a Unix stream socket only root may connect to.
///
/// The deployment travels as its device and inode: the service walks to it
/// itself, by descriptor, and moves it only when it is that very folder.
enum FlatpakMoveWire {
    /// A message longer than this is refused: a call with every trusted
    /// remote the configuration may name, each with its keys, fits.
    static let messageLimit = 64 * 1024

    static func request(_ request: FlatpakMoveRequest) -> [UInt8] {
        let parameters = Mover.MoveApp.Parameters(
            uid: Int64(request.uid), home: request.home, appID: request.appID, arch: request.arch, branch: request.branch,
            commit: request.commit, device: Int64(bitPattern: request.deployment.device),
            inode: Int64(bitPattern: request.deployment.inode),
            trusted: request.trusted.map { Mover.TrustedRemote(name: $0.name, url: $0.url, fingerprints: $0.fingerprints) })
        return VarlinkCall(method: Mover.MoveApp.method, parameters: parameters.object).encoded()
    }

    static func parseRequest(_ bytes: [UInt8]) throws(FlatpakMoveError) -> FlatpakMoveRequest {
        guard bytes.count <= messageLimit, bytes.last == 0 else {
            throw .invalidRequest("not one message of at most \(messageLimit) bytes")
        }
        var parsed: Result<VarlinkCall, VarlinkMessageError>?
        bytes.dropLast().withUnsafeBytes { body in
            parsed = Result { () throws(VarlinkMessageError) in try VarlinkCall(parsing: body) }
        }
        guard case .success(let call)? = parsed else { throw .invalidRequest("not a Varlink call") }
        guard call.method == Mover.MoveApp.method else { throw .invalidRequest("\(call.method) is not a method of \(moverInterfaceName)") }
        let parameters: Mover.MoveApp.Parameters
        do throws(ProtocolDecodingError) {
            parameters = try Mover.MoveApp.Parameters(call.parameters, strict: true)
        } catch {
            throw .invalidRequest("\(error)")
        }
        guard let uid = UInt32(exactly: parameters.uid) else { throw .invalidRequest("uid \(parameters.uid) is not a user's") }
        guard parameters.trusted.count <= FlatpakTrustedRemote.limit else {
            throw .invalidRequest("more than \(FlatpakTrustedRemote.limit) trusted remotes")
        }
        var trusted: [FlatpakTrustedRemote] = []
        for remote in parameters.trusted {
            // Checked by the rules of the configuration line it came from.
            switch FlatpakTrustedRemote.parse(([remote.name, remote.url] + remote.fingerprints).joined(separator: " ")) {
            case .success(let remote): trusted.append(remote)
            case .failure(let error): throw .invalidRequest("a trusted remote: \(error)")
            }
        }
        let status = FileStatus(device: UInt64(bitPattern: parameters.device), inode: UInt64(bitPattern: parameters.inode),
                                mode: 0, uid: uid, gid: 0, linkCount: 0)
        return FlatpakMoveRequest(uid: uid, home: parameters.home, appID: parameters.appID, arch: parameters.arch,
                                  branch: parameters.branch, commit: parameters.commit, deployment: status, trusted: trusted)
    }

    static func reply(_ result: Result<FlatpakApproval, FlatpakMoveError>) -> [UInt8] {
        switch result {
        case .success(let approval):
            let runtime = approval.runtime.map { Mover.RuntimePin(name: $0.name, commit: $0.commit, timestamp: Int64(clamping: $0.timestamp)) }
                ?? Mover.RuntimePin(name: "", commit: "", timestamp: 0)
            let reply = Mover.MoveApp.Reply(remote: approval.remote, url: approval.url, commit: approval.commit,
                                            timestamp: Int64(clamping: approval.timestamp), runtime: runtime)
            return VarlinkReply(parameters: reply.object).encoded()
        case .failure(.invalidRequest(let message)):
            let error = MoverError.invalidRequest(message: message)
            return VarlinkReply(parameters: error.parameters, error: error.name).encoded()
        case .failure(let failure):
            let error = MoverError.refused(message: failure.description)
            return VarlinkReply(parameters: error.parameters, error: error.name).encoded()
        }
    }

    static func parseReply(_ bytes: [UInt8], for request: FlatpakMoveRequest) throws(FlatpakMoveError) -> FlatpakApproval {
        guard bytes.count <= messageLimit, bytes.last == 0 else { throw .service("the move service answered with no valid reply") }
        var parsed: Result<VarlinkReply, VarlinkMessageError>?
        bytes.dropLast().withUnsafeBytes { body in
            parsed = Result { () throws(VarlinkMessageError) in try VarlinkReply(parsing: body) }
        }
        guard case .success(let message)? = parsed else { throw .service("the move service answered with no valid reply") }
        if let name = message.error {
            switch try? MoverError(name: name, parameters: message.parameters) {
            case .refused(let reason)?: throw .service(reason)
            case .invalidRequest(let reason)?: throw .service("the move service refused the call: \(reason)")
            case nil: throw .service("the move service answered with an error not of its interface")
            }
        }
        let reply: Mover.MoveApp.Reply
        do throws(ProtocolDecodingError) {
            reply = try Mover.MoveApp.Reply(message.parameters, strict: true)
        } catch {
            throw .service("the move service answered out of its interface: \(error)")
        }
        guard FlatpakRemoteConfiguration.isRemoteName(reply.remote), FlatpakRemoteConfiguration.isAcceptableURL(reply.url),
              reply.commit == request.commit, let timestamp = UInt64(exactly: reply.timestamp),
              let runtimeTime = UInt64(exactly: reply.runtime.timestamp) else {
            throw .service("the move service answered with no valid approval")
        }
        let runtime = FlatpakRuntimePin(name: reply.runtime.name, commit: reply.runtime.commit, timestamp: runtimeTime)
        guard runtime.parts != nil, OstreeCommit.isChecksum(runtime.commit) else {
            throw .service("the move service named no valid runtime")
        }
        return FlatpakApproval(appID: request.appID, arch: request.arch, branch: request.branch, remote: reply.remote,
                               url: reply.url, commit: reply.commit, timestamp: timestamp, runtime: runtime)
    }
}
