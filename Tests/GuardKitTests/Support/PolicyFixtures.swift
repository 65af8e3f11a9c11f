import FamilyConfiguration
import FamilyControlsModel
import Foundation
@testable import GuardKit
import GuardProtocol
import LockEngine
import PAM
import Synchronization
import SystemKit
import Testing
@testable import GuardIdentity
@testable import GuardPolicy
@testable import GuardStore

// Fakes for the policy's unit tests: a scripted app (its channel), a scripted
// PAM, a lock that only remembers, a store in a temporary directory, and
// accounts every Debian system has. Nothing here needs root.

/// The accounts the tests play: a child, their guardian, an adult who is
/// neither, and root; looked up in NSS, never created.
enum Accounts {
    static let child = "daemon"
    static let guardian = "bin"
    static let adult = "nobody"

    static func account(_ name: String) throws -> UserAccount {
        guard let account = try UserDatabase.user(named: name) else { throw StoreFixtureError("no user \(name) on this system") }
        return account
    }
}

/// How the scripted app answers one prompt.
enum Reply: Sendable {
    case answer(String)
    case hangUp
    case timeOut
}

/// An app (or a guardian's `familyctl`) at the other end of a request: it
/// answers each prompt with `script`, and keeps every prompt it was shown.
final class ScriptedChannel: RequestChannel {
    private let script: @Sendable (AuthorizationPrompt) -> Reply
    private let state = Mutex<(prompts: [AuthorizationPrompt], closed: Bool)>(([], false))

    init(_ script: @escaping @Sendable (AuthorizationPrompt) -> Reply) { self.script = script }

    /// Answers the alert with `alert`, the guardian's name prompts with `names` in turn.
    convenience init(alert: AlertResponse, names: [String] = []) {
        let queue = Mutex(names)
        self.init { prompt in
            switch prompt.kind {
            case .alert: return .answer(alert.wire)
            case .guardian: return queue.withLock { $0.isEmpty ? .hangUp : .answer($0.removeFirst()) }
            default: return .hangUp
            }
        }
    }

    func ask(_ prompt: AuthorizationPrompt, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes {
        state.withLock { $0.prompts.append(prompt) }
        switch script(prompt) {
        case .answer(let text): return SecretBytes(text)
        case .hangUp:
            goAway()
            throw .canceled
        case .timeOut: throw .timedOut
        }
    }

    func tell(_ prompt: AuthorizationPrompt) { state.withLock { $0.prompts.append(prompt) } }

    var isClosed: Bool { state.withLock { $0.closed } }
    let hangUp = HangUp()
    func goAway() {
        state.withLock { $0.closed = true }
        hangUp.set()
    }

    var prompts: [AuthorizationPrompt] { state.withLock { $0.prompts } }
    func shown(_ kind: AuthorizationPrompt.Kind) -> [String] { prompts.filter { $0.kind == kind }.map(\.message) }
}

/// PAM as a script: each transaction takes the next verdict (the last one
/// repeats), and every request is kept.
final class ScriptedAuthenticator: Authenticating {
    private let state: Mutex<(verdicts: [PAMError.Reason?], requests: [PAMRequest])>

    /// `verdicts`: nil accepts, a reason refuses with it.
    init(_ verdicts: [PAMError.Reason?]) { state = Mutex((verdicts, [])) }

    func authenticate(_ request: PAMRequest, conversation: any PAMConversation) throws(PAMError) {
        let verdict = state.withLock { state -> PAMError.Reason? in
            state.requests.append(request)
            return state.verdicts.count > 1 ? state.verdicts.removeFirst() : state.verdicts.first ?? nil
        }
        if let verdict { throw PAMError(verdict, service: request.service, user: request.user) }
    }

    var requests: [PAMRequest] { state.withLock { $0.requests } }
}

/// A lock that remembers what it was asked and changes no file.
final class RecordingLocker: AppLocker {
    private let locks = Mutex<[String: (path: String, identity: FileIdentity)]>([:])
    private let counts = Mutex<(locked: Int, unlocked: Int)>((0, 0))

    private static func key(_ user: String, _ appID: String) -> String { user + "/" + appID }

    func lock(user: String, appID: String, directory: OpenedDirectory, linksOutsideAllowed: Bool) throws -> LockReport {
        locks.withLock { $0[Self.key(user, appID)] = (directory.path, directory.identity) }
        counts.withLock { $0.locked += 1 }
        return LockReport(record: LockRecord(user: user, appID: appID, path: directory.path,
                                             device: directory.identity.device, inode: directory.identity.inode,
                                             state: .locked), findings: [])
    }

    func unlock(user: String, appID: String, roots: [String]) throws -> [String] {
        _ = locks.withLock { $0.removeValue(forKey: Self.key(user, appID)) }
        counts.withLock { $0.unlocked += 1 }
        return []
    }

    func state(user: String, appID: String, roots: [String]) throws -> (state: LockState, path: String)? {
        locks.withLock { $0[Self.key(user, appID)].map { (.locked, $0.path) } }
    }

    func resume() throws -> [String] { [] }
    func check(_ app: ApprovedApp, repair: Bool) throws -> [String] { [] }

    func lockedApps() throws -> [(user: String, appID: String)] {
        locks.withLock { $0.keys.map { key in
            let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
            return (parts[0], parts[1])
        } }
    }

    func lock(coveringDirectory directory: FileIdentity) throws -> (user: String, appID: String)? {
        locks.withLock { locks in
            locks.first { $0.value.identity == directory }.map { key, _ in
                let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
                return (parts[0], parts[1])
            }
        }
    }

    var locked: Int { counts.withLock { $0.locked } }
    var unlocked: Int { counts.withLock { $0.unlocked } }
    func isLocked(_ user: String, _ appID: String) -> Bool { locks.withLock { $0[Self.key(user, appID)] != nil } }
}

/// A policy over a temporary store, with a family of `daemon` (a child) and
/// `bin` (their guardian), a recording lock and a scripted PAM.
struct PolicyFixture {
    let policy: AuthorizationPolicy
    let locker: RecordingLocker
    let authenticator: ScriptedAuthenticator
    let directory: String

    static let appID = "org.example.Paint"

    /// The family's configuration; `InSessionApproval=` and the timeouts as given.
    static func configuration(inSession: Bool = false, pendingTimeout: Duration = .seconds(60)) -> GuardConfiguration {
        var configuration = GuardConfiguration()
        configuration.children = [.user(Accounts.child)]
        configuration.guardians = [.user(Accounts.guardian)]
        configuration.inSessionApproval = inSession
        configuration.pendingTimeout = pendingTimeout
        configuration.maxAttempts = 3
        configuration.failureDelay = .seconds(30)
        return configuration
    }

    /// An app folder of the test's, held open as an identified app's is.
    func caller(_ user: String, folder: String = "Paint") throws -> Caller {
        let path = directory + "/" + folder
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let opened = try OpenedDirectory.open(path)
        let app = AppIdentity(appID: Self.appID, displayName: "Paint", directory: path, executable: path + "/paint",
                              directoryIdentity: opened.identity)
        return Caller(account: try Accounts.account(user), app: app, directory: opened)
    }

    /// Records `status` for `caller` as an administrator would, outside any request.
    func record(_ status: AuthorizationStatus, _ member: FamilyControlsMember, for caller: Caller,
                identity: FileIdentity? = nil) throws {
        let record = AuthorizationRecord(
            user: caller.account.name, uid: caller.account.uid, appID: caller.app.appID, member: member,
            status: status, approvedBy: status == .approved ? "root" : nil, updatedAt: .now,
            appPath: caller.app.directory, appIdentity: identity ?? caller.app.directoryIdentity)
        try policy.ledger.commit(record, audit: policy.ledger.event(.set, actor: "root", user: record.user,
                                                                    appID: record.appID, member: member, outcome: .approved))
    }

    func current(_ caller: Caller) throws -> AuthorizationRecord? {
        try policy.ledger.authorization(user: caller.account.name, appID: caller.app.appID)
    }

    /// The audit rows about the app, oldest first.
    func audit() throws -> [AuditEvent] {
        try policy.ledger.store.auditEvents(appID: Self.appID, limit: 100)
    }

    /// Waits (a few seconds at most) until a request waits for a guardian.
    func waitingRequest() throws -> PendingRequest {
        let deadline = MonotonicInstant.now.advanced(by: .seconds(10))
        while MonotonicInstant.now < deadline {
            if let request = policy.pendingRequests(for: try Accounts.account("root")).first { return request }
            usleep(20_000)
        }
        throw StoreFixtureError("no request came to wait for a guardian")
    }
}

/// Runs `body` with a policy over a fresh store and a fresh folder for apps.
func withPolicy<R>(_ configuration: GuardConfiguration = PolicyFixture.configuration(),
                   pam verdicts: [PAMError.Reason?] = [nil],
                   _ body: (PolicyFixture) throws -> R) throws -> R {
    try withStore { store, directory in
        let locker = RecordingLocker()
        let authenticator = ScriptedAuthenticator(verdicts)
        let policy = try AuthorizationPolicy(store: store, configuration: configuration, locker: locker,
                                             authenticator: authenticator, logger: .quiet)
        let apps = (directory as NSString).deletingLastPathComponent + "/apps"
        return try body(PolicyFixture(policy: policy, locker: locker, authenticator: authenticator, directory: apps))
    }
}

/// Runs `work` on a thread of its own, as the Guard runs a request on one of
/// its pools; ``result`` waits for it.
final class Background<Value: Sendable>: Sendable {
    private let outcome = Mutex<Result<Value, GuardFailure>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () throws(GuardFailure) -> Value) {
        let thread = Thread { [self] in
            let result: Result<Value, GuardFailure>
            do throws(GuardFailure) { result = .success(try work()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        thread.start()
    }

    /// The result, waited for at most `timeout`.
    func result(within timeout: Duration = .seconds(20)) throws -> Result<Value, GuardFailure> {
        let seconds = Double(timeout.components.seconds)
        guard done.wait(timeout: .now() + seconds) == .success, let result = outcome.withLock({ $0 }) else {
            throw StoreFixtureError("the request did not end within \(timeout)")
        }
        return result
    }
}
