import CPAM
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// One PAM handle from `pam_start` to `pam_end`, on the calling thread.
package enum PAMTransaction {
    /// - Parameter readingModuleLog: read back what the modules log while they
    ///   authenticate (``ModuleLog``), to tell a directory that cannot be
    ///   reached from a wrong password behind a stack that hides it. Only in a
    ///   process of its own: descriptor 2 is a pipe meanwhile.
    static func run(_ request: PAMRequest, conversation: any PAMConversation,
                    readingModuleLog: Bool = false) throws(PAMError) {
        let relay = ConversationRelay(conversation: conversation, promptTimeout: request.promptTimeout)
        let context = Unmanaged.passRetained(relay)
        defer { context.release() }
        let state = UnsafeMutablePointer<cpam_conversation>.allocate(capacity: 1)
        defer { state.deallocate() }
        state.initialize(to: cpam_conversation(reply: relayReply, context: context.toOpaque()))

        func failure(_ reason: PAMError.Reason, _ code: PAMResultCode? = nil) -> PAMError {
            PAMError(reason, service: request.service, user: request.user, code: code)
        }

        if let problem = PAMServiceFile.problem(service: request.service, directory: request.configurationDirectory) {
            var error = failure(.serviceMissing)
            error.detail = problem
            throw error
        }
        if let problem = cpam_unavailable() {
            var error = failure(.serviceMissing)
            error.detail = "libpam cannot be loaded: " + String(cString: problem)
            throw error
        }
        var handle: OpaquePointer?
        let started = PAMResultCode(rawValue: cpam_start(
            request.service, request.user, request.configurationDirectory, state, &handle))
        guard started == .success, let handle else {
            throw failure(.serviceMisconfigured, started)
        }
        var last = PAMResultCode.success
        defer { cpam_end(handle, last.rawValue) }

        for (item, value) in [(PAM_RUSER, request.requestingUser), (PAM_TTY, request.tty), (PAM_RHOST, "")] {
            guard let value else { continue }
            last = PAMResultCode(rawValue: cpam_set_string_item(handle, item, value))
            guard last == .success else { throw failure(.serviceMisconfigured, last) }
        }

        // Empty passwords never authorize anything here, whatever `nullok` says.
        let flags = CInt(bitPattern: PAM_DISALLOW_NULL_AUTHTOK)
        var directoryUnreachable = false
        if readingModuleLog {
            let (code, log) = ModuleLog.reading { cpam_authenticate(handle, flags) }
            last = PAMResultCode(rawValue: code)
            directoryUnreachable = last != .success && ModuleLog.saysDirectoryUnreachable(log, user: request.user)
        } else {
            last = PAMResultCode(rawValue: cpam_authenticate(handle, flags))
        }
        if last == .success {
            last = PAMResultCode(rawValue: cpam_acct_mgmt(handle, flags))
        }
        if let end = relay.end {
            // A module may turn a canceled conversation into PAM_AUTH_ERR; the cause is ours.
            throw failure(end == .canceled ? .canceled : .timedOut, last)
        }
        guard last == .success else {
            // pam_deny's PAM_AUTH_ERR after pam_sss could not reach the directory is that, not a wrong password.
            let judged = last == .authenticationError && directoryUnreachable ? .authenticationInfoUnavailable : last
            throw failure(reason(for: judged, user: request.user), last)
        }
        guard let current = cpam_get_string_item(handle, PAM_USER), String(cString: current) == request.user else {
            last = .permissionDenied
            throw failure(.userChanged)
        }
    }

    /// Maps a failed code to a reason, from what NSS and the shadow database say of `user`.
    private static func reason(for code: PAMResultCode, user: String) -> PAMError.Reason {
        let unknown = (try? UserDatabase.user(named: user)) == .some(nil)
        return reason(for: code, unknownUser: unknown, shadow: unknown ? .unknown : ShadowAccount.passwordState(of: user))
    }

    /// Maps a failed code to a reason; for a plain authentication failure the
    /// shadow entry tells the log whether the account is locked or has no password.
    ///
    /// `PAM_AUTHINFO_UNAVAIL` is the directory down (pam_sss with its server
    /// unreachable) only for an account with no local shadow entry: a local
    /// password was checked before the directory module ran, so for a local
    /// account it is a refusal like any other, counted (a child cannot stop
    /// the counting by cutting the network).
    package static func reason(for code: PAMResultCode, unknownUser: Bool,
                               shadow: ShadowAccount.PasswordState) -> PAMError.Reason {
        switch code {
        case .authenticationError, .credentialsInsufficient, .userUnknown, .authenticationInfoUnavailable:
            if unknownUser { return .unknownUser }
            switch shadow {
            case .locked: return .accountLocked
            case .none: return .noUsablePassword
            case .expired: return .accountExpired
            case .unknown where code == .authenticationInfoUnavailable: return .directoryUnavailable
            case .usable, .unknown: return code == .userUnknown ? .unknownUser : .authenticationFailed
            }
        case .maximumTries: return .tooManyTries
        case .accountExpired: return .accountExpired
        case .newAuthenticationTokenRequired: return .passwordExpired
        case .permissionDenied: return .permissionDenied
        default: return .serviceMisconfigured
        }
    }
}

/// Carries the Swift conversation through libpam's `appdata_ptr`, and remembers
/// why it ended early. Used only on the transaction's thread.
private final class ConversationRelay {
    let conversation: any PAMConversation
    let promptTimeout: Duration
    var end: PAMConversationEnd?

    init(conversation: any PAMConversation, promptTimeout: Duration) {
        self.conversation = conversation
        self.promptTimeout = promptTimeout
    }

    func respond(style: CInt, text: String) throws(PAMConversationEnd) -> SecretBytes? {
        let message: PAMMessage
        switch style {
        case PAM_PROMPT_ECHO_OFF: message = .secretPrompt(text)
        case PAM_PROMPT_ECHO_ON: message = .textPrompt(text)
        case PAM_ERROR_MSG: message = .error(text)
        default: message = .info(text)
        }
        let deadline = MonotonicInstant.now.advanced(by: promptTimeout)
        let answer = try conversation.respond(to: message, deadline: deadline)
        // An answer that arrives after the deadline is not accepted.
        if message.isPrompt && MonotonicInstant.now > deadline { throw .timedOut }
        return answer
    }
}

/// The `cpam_reply_fn` libpam reaches through `cpam_converse`.
private func relayReply(
    context: UnsafeMutableRawPointer?, style: CInt, message: UnsafePointer<CChar>?,
    reply: UnsafeMutablePointer<CChar>?, capacity: Int, length: UnsafeMutablePointer<Int>?
) -> CInt {
    guard let context, let length else { return 1 }
    let relay = Unmanaged<ConversationRelay>.fromOpaque(context).takeUnretainedValue()
    if relay.end != nil { return 1 }
    let text = message.map { String(cString: $0) } ?? ""
    do throws(PAMConversationEnd) {
        let answer = try relay.respond(style: style, text: text)
        guard let reply else { return 0 }
        guard let answer else { length.pointee = 0; return 0 }
        return answer.withUnsafeBytes { bytes in
            length.pointee = bytes.count
            // Too long: cpam_converse sees the length and refuses the whole reply.
            guard bytes.count < capacity, let base = bytes.baseAddress else { return 0 }
            UnsafeMutableRawPointer(reply).copyMemory(from: base, byteCount: bytes.count)
            return 0
        }
    } catch {
        relay.end = error
        return 1
    }
}
