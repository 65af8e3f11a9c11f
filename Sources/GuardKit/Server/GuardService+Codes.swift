import GuardProtocol
import SystemKit
import Varlink

extension GuardService {
    /// Who calls `EnrollCode`: anyone with an account; the policy refuses
    /// root and whoever is no one's guardian before asking anything.
    func enroller(_ parameters: Guard.EnrollCode.Parameters, _ served: ServedCall) -> Result<Administrator, GuardFailure> {
        let connection = served.connection
        do throws(GuardFailure) {
            let account = try requester(connection)
            return .success(Administrator(account: account, session: session(of: connection, for: account)))
        } catch {
            return .failure(error)
        }
    }

    /// `EnrollCode`, on a decision thread: the guardian may be asked to
    /// authenticate over the connection; the last reply carries the secret,
    /// to this connection only.
    func enrollCode(_ parameters: Guard.EnrollCode.Parameters, _ requester: Administrator,
                    _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.EnrollCode.Reply {
        Guard.EnrollCode.Reply(secret: try policy.enrollCode(for: requester.account, proof: requester.proof(over: channel)))
    }

    /// `RemoveCode`: the caller's own, or root's for anyone.
    func removeCode(_ parameters: Guard.RemoveCode.Parameters, _ served: ServedCall) {
        respond(served.call, on: served.connection) { () throws(GuardFailure) -> JSONObject in
            let requester = try requester(served.connection)
            return Guard.RemoveCode.Reply(removed: try policy.removeCode(of: parameters.user, requester: requester)).object
        }
    }
}
