import Foundation

/// The Guard (`familycontrolsd`) over its socket: what
/// ``AuthorizationCenter/shared`` talks to. The client blocks on people and on
/// the socket, so every call runs on a thread of its own, never on the
/// cooperative pool.
package struct GuardBackend: AuthorizationBackend {
    package init() {}

    package func request(_ member: FamilyControlsMember, prompter: any Prompter) async -> Result<AuthorizationStatus, AuthorizationFailure> {
        await Self.onOwnThread {
            do throws(GuardClientFailure) {
                return .success(try GuardClient.request(member, prompter: prompter))
            } catch {
                return .failure(AuthorizationFailure(error))
            }
        }
    }

    package func revoke(prompter: any Prompter) async -> Result<Void, AuthorizationFailure> {
        await Self.onOwnThread {
            do throws(GuardClientFailure) {
                try GuardClient.revoke(prompter: prompter)
                return .success(())
            } catch {
                return .failure(AuthorizationFailure(error))
            }
        }
    }

    package func follow(_ update: @escaping @Sendable (AuthorizationStatus) -> Void) -> any StatusFollowing {
        StatusFollower(update: update)
    }

    /// Runs blocking work on a new thread and awaits it.
    private static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "FamilyControls request"
            thread.start()
        }
    }
}

extension StatusFollower: StatusFollowing {}

extension AuthorizationFailure {
    init(_ failure: GuardClientFailure) {
        self.init(failure.error, message: failure.message, resultingStatus: failure.resultingStatus)
    }
}
