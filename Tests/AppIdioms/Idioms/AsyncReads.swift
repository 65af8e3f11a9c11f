// Reads in `@Sendable` and async closures, tasks and actors, without `await`:
// a TCA dependency client, an Expo module's functions, an actor.
import FamilyControls
import Foundation

/// A TCA-style dependency client: every endpoint a `@Sendable` closure.
struct FamilyControlsClient: Sendable {
    var authorizationStatus: @Sendable () -> AuthorizationStatus
    var requestAuthorization: @Sendable (FamilyControlsMember) async throws -> Void
    var revokeAuthorization: @Sendable () async throws -> Void
    var authorizationStatusUpdates: @Sendable () -> AsyncStream<AuthorizationStatus>
}

extension FamilyControlsClient {
    static let live = FamilyControlsClient(
        authorizationStatus: { AuthorizationCenter.shared.authorizationStatus },
        requestAuthorization: { member in
            try await AuthorizationCenter.shared.requestAuthorization(for: member)
        },
        revokeAuthorization: {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                AuthorizationCenter.shared.revokeAuthorization { result in
                    continuation.resume(with: result)
                }
            }
        },
        authorizationStatusUpdates: {
            AsyncStream { continuation in
                let cancellable = AuthorizationCenter.shared.$authorizationStatus
                    .removeDuplicates()
                    .sink { continuation.yield($0) }
                continuation.onTermination = { _ in cancellable.cancel() }
            }
        }
    )
}

/// Expo's module definition DSL, as far as this module uses it.
struct ExpoModuleDefinition {
    var functions: [String: () -> Any] = [:]
    var asyncFunctions: [String: (String) async throws -> Any] = [:]
    var events: [String] = []

    mutating func function(_ name: String, _ body: @escaping () -> Any) { functions[name] = body }
    mutating func asyncFunction(_ name: String, _ body: @escaping (String) async throws -> Any) { asyncFunctions[name] = body }
}

/// An Expo module: synchronous and asynchronous functions, and an event.
final class ExpoScreenTimeModule {
    private var statusSubscription: AnyCancellable?
    var sendEvent: (String, [String: Any]) -> Void = { _, _ in }

    func definition() -> ExpoModuleDefinition {
        var module = ExpoModuleDefinition()
        module.events = ["onAuthorizationStatusChange"]
        module.function("getAuthorizationStatus") {
            AuthorizationCenter.shared.authorizationStatus.rawValue
        }
        module.asyncFunction("requestAuthorization") { member in
            try await AuthorizationCenter.shared.requestAuthorization(for: member == "child" ? .child : .individual)
            return AuthorizationCenter.shared.authorizationStatus.rawValue
        }
        return module
    }

    func startObserving() {
        statusSubscription = AuthorizationCenter.shared.$authorizationStatus
            .dropFirst()
            .sink { [weak self] status in
                self?.sendEvent("onAuthorizationStatusChange", ["status": status.rawValue])
            }
    }

    func stopObserving() {
        statusSubscription?.cancel()
    }
}

/// An actor that reads the status synchronously inside its methods.
actor UsageReporter {
    private var reports: [AuthorizationStatus] = []

    func record() {
        reports.append(AuthorizationCenter.shared.authorizationStatus)
    }

    func requestIfNeeded() async throws {
        guard AuthorizationCenter.shared.authorizationStatus != .approved else { return }
        try await AuthorizationCenter.shared.requestAuthorization(for: .individual)
    }
}

/// Request, then read, as the forums' examples do, from a nonisolated async function.
func requestScreenTime() async -> Bool {
    do {
        try await AuthorizationCenter.shared.requestAuthorization(for: .individual)
        return AuthorizationCenter.shared.authorizationStatus == .approved
    } catch {
        return false
    }
}

/// Reads from a detached task, a task group and a `@Sendable` closure.
func statusFromTasks() async -> [AuthorizationStatus] {
    let detached = await Task.detached { AuthorizationCenter.shared.authorizationStatus }.value
    let read: @Sendable () -> AuthorizationStatus = { AuthorizationCenter.shared.authorizationStatus }
    var all = [detached, read()]
    await withTaskGroup(of: AuthorizationStatus.self) { group in
        for _ in 0..<2 { group.addTask { AuthorizationCenter.shared.authorizationStatus } }
        for await status in group { all.append(status) }
    }
    return all
}

/// The status as an async sequence, Combine's `values`.
func watchStatus() async {
    for await status in AuthorizationCenter.shared.$authorizationStatus.values {
        if status == .approved { break }
    }
    for await status in AuthorizationCenter.shared.authorizationStatusUpdates where status == .denied {
        print("denied")
    }
}
