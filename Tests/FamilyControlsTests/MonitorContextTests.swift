import FamilyControls
import FamilyControlsTesting
import Foundation
import Synchronization
import Testing

/// A Varlink service at a socket of its own, standing in for the Guard: it
/// answers `IdentifyMonitor` with `reply` (a JSON object, or an error name)
/// and counts the calls it hears. Run by this test process (root when the
/// suite runs as root, as the library demands of a Guard).
private final class IdentifyingService: Sendable {
    let path: String
    private let listener: Int32
    private let state = Mutex((calls: 0, reply: ""))

    init(reply: String) throws {
        let path = "/tmp/fc-monitor-\(UUID().uuidString.prefix(8)).socket"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 8) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        self.path = path
        self.listener = listener
        state.withLock { $0.reply = reply }
        Thread.detachNewThread { [self] in
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { break }
                serve(connection)
                close(connection)
            }
            // Closed here, after the last accept: closed by stop(), its number could be
            // another test's listener by the time this thread accepts again.
            close(listener)
            stopped.signal()
        }
    }

    private let stopped = DispatchSemaphore(value: 0)

    var calls: Int { state.withLock { $0.calls } }

    func answer(with reply: String) { state.withLock { $0.reply = reply } }

    /// Reads one call (up to its NUL) and answers it.
    private func serve(_ connection: Int32) {
        var received: [UInt8] = []
        var byte: UInt8 = 0
        while read(connection, &byte, 1) == 1, byte != 0 { received.append(byte) }
        let call = String(decoding: received, as: UTF8.self)
        let reply = state.withLock { state in
            if call.contains("org.familycontrols.guard.IdentifyMonitor") { state.calls += 1 }
            return state.reply
        }
        let message = reply.hasPrefix("{") ? "{\"parameters\":\(reply)}" : "{\"error\":\"\(reply)\",\"parameters\":{}}"
        _ = (Array(message.utf8) + [0]).withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        stopped.wait()
        unlink(path)
    }
}

private let monitorReply = """
    {"monitor":{"appID":"org.example.App","user":"kid","session":"c7","state":"running","pid":4242,\
    "startedAt":1800000000,"restarts":0}}
    """

extension SharedCenterTests {
    /// `AuthorizationCenter.monitorContext` against a service standing in for
    /// the Guard: the environment alone decides nothing, the Guard's word
    /// does, and it is asked once.
    @Suite struct MonitorContextTests {
        /// Runs `body` with the Guard's socket and the monitor's variables set as given.
        private func with(socket: String, app: String?, session: String?, _ body: () async throws -> Void) async rethrows {
            try await withProcessVariables(["FAMILYCONTROLS_SOCKET": socket, MonitorClaim.appVariable: app,
                                                   MonitorClaim.sessionVariable: session], body)
        }

        @Test(.enabled(if: geteuid() == 0, "the library accepts only a Guard that runs as root: the test's service must"))
        func aMonitorTheGuardConfirmsIsNamedAndTheGuardIsAskedOnce() async throws {
            let service = try IdentifyingService(reply: monitorReply)
            defer { service.stop() }
            try await with(socket: service.path, app: "org.example.App", session: "c7") {
                let center = AuthorizationCenter(backend: GuardBackend())
                let context = try #require(await center.monitorContext)
                #expect(context.appID == "org.example.App")
                #expect(context.user == "kid")
                #expect(context.session == "c7")
                #expect(await center.isRunningAsMonitor)
                // Kept: the Guard saying otherwise later changes nothing for this process.
                service.answer(with: "{}")
                #expect(await center.monitorContext == context)
                #expect(service.calls == 1)
            }
        }

        @Test func withoutTheGuardsVariablesTheAnswerIsNoAndTheGuardIsNotAsked() async throws {
            let service = try IdentifyingService(reply: monitorReply)
            defer { service.stop() }
            for (app, session) in [(nil, nil), ("org.example.App", nil), (nil, "c7"), ("", "c7"), ("org.example.App", "")] {
                await with(socket: service.path, app: app, session: session) {
                    let center = AuthorizationCenter(backend: GuardBackend())
                    #expect(await center.monitorContext == nil)
                    #expect(await !center.isRunningAsMonitor)
                }
            }
            #expect(service.calls == 0)
        }

        @Test(.enabled(if: geteuid() == 0, "the library accepts only a Guard that runs as root: the test's service must"))
        func variablesTheGuardDoesNotConfirmAreNotAMonitor() async throws {
            let service = try IdentifyingService(reply: "{}")
            defer { service.stop() }
            // Set by hand, as anyone can: the Guard says this process is no monitor.
            await with(socket: service.path, app: "org.example.App", session: "c7") {
                let center = AuthorizationCenter(backend: GuardBackend())
                #expect(await center.monitorContext == nil)
                #expect(await center.monitorContext == nil)
                #expect(service.calls == 1)
            }
            // The Guard names a monitor, but not the app or session the variables claim.
            service.answer(with: monitorReply)
            for (app, session) in [("org.example.Other", "c7"), ("org.example.App", "c8")] {
                await with(socket: service.path, app: app, session: session) {
                    #expect(await AuthorizationCenter(backend: GuardBackend()).monitorContext == nil)
                }
            }
            #expect(service.calls == 3)
        }

        @Test(.enabled(if: geteuid() == 0, "the library accepts only a Guard that runs as root: the test's service must"))
        func aGuardThatCannotAnswerIsNoAndIsAskedAgainLater() async throws {
            let missing = "/tmp/fc-no-guard-\(UUID().uuidString).socket"
            await with(socket: missing, app: "org.example.App", session: "c7") {
                let center = AuthorizationCenter(backend: GuardBackend())
                #expect(await center.monitorContext == nil)
                #expect(center.lastErrorMessage?.contains("does not exist") == true)
            }
            // An older Guard without the method: no, and said why.
            let service = try IdentifyingService(reply: "org.varlink.service.MethodNotFound")
            defer { service.stop() }
            await with(socket: service.path, app: "org.example.App", session: "c7") {
                let center = AuthorizationCenter(backend: GuardBackend())
                #expect(await center.monitorContext == nil)
                // Not kept: once the Guard answers, the same center hears it.
                service.answer(with: monitorReply)
                #expect(await center.monitorContext?.session == "c7")
                #expect(service.calls == 2)
            }
        }

        @Test func theInMemoryGuardCanStartTheProcessAsItsMonitor() async throws {
            let familyGuard = InMemoryGuard(status: .approved)
            #expect(await familyGuard.center.monitorContext == nil)
            #expect(familyGuard.monitorIdentifications == 0)

            let monitorGuard = InMemoryGuard(status: .approved)
            monitorGuard.monitorSession = "c7"
            let context = try #require(await monitorGuard.center.monitorContext)
            #expect(context.session == "c7")
            #expect(await monitorGuard.center.isRunningAsMonitor)
            #expect(monitorGuard.monitorIdentifications == 1)

            let stoppedGuard = InMemoryGuard(status: .approved)
            stoppedGuard.monitorSession = "c7"
            stoppedGuard.isRunning = false
            #expect(await stoppedGuard.center.monitorContext == nil)
        }
    }
}
