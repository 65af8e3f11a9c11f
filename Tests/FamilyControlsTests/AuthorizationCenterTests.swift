import FamilyControls
import Foundation
import Observation
import Testing

extension SharedCenterTests {
    /// The library without a Guard: the state a fresh process starts in, and the
    /// failure a sandbox without the socket gets.
    @Suite struct AuthorizationCenterTests {
        @MainActor @Test func statusStartsNotDetermined() {
            #expect(AuthorizationCenter.shared.authorizationStatus == .notDetermined)
        }

        @Test func noGuardFailsWithUnavailableQuickly() async throws {
            await withProcessVariables(["FAMILYCONTROLS_SOCKET": "/tmp/fc-no-guard-\(UUID().uuidString).socket"]) {
                for member in FamilyControlsMember.allCases {
                    let started = ContinuousClock.now
                    await #expect(throws: FamilyControlsError.unavailable) {
                        try await AuthorizationCenter.shared.requestAuthorization(for: member)
                    }
                    // No wait on any timeout (a request's own is minutes): well under the
                    // client's 1 s connect bound when idle; loose here because other
                    // suites load both cores, and 5 s was once not enough.
                    #expect(ContinuousClock.now - started < .seconds(20))
                }
                let revoked: Result<Void, any Error> = await withCheckedContinuation { continuation in
                    AuthorizationCenter.shared.revokeAuthorization { continuation.resume(returning: $0) }
                }
                #expect((try? revoked.get()) == nil)
                #expect((revoked.failureValue as? FamilyControlsError) == .unavailable)
                #expect(AuthorizationCenter.shared.lastErrorMessage?.contains("does not exist") == true)
                await MainActor.run { #expect(AuthorizationCenter.shared.authorizationStatus == .notDetermined) }
            }
        }

        @Test func aSocketNobodyAnswersOnIsUnavailableToo() async throws {
            let path = "/tmp/fc-stale-\(UUID().uuidString.prefix(8)).socket"
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            close(fd)  // bound, never listening: a stale socket file
            defer { unlink(path) }
            await withProcessVariables(["FAMILYCONTROLS_SOCKET": path]) {
                let started = ContinuousClock.now
                await #expect(throws: FamilyControlsError.unavailable) {
                    try await AuthorizationCenter.shared.requestAuthorization(for: .child)
                }
                // At once (connect is refused), not after a request's wait: the bound
                // is loose because the whole suite shares this process's threads.
                #expect(ContinuousClock.now - started < .seconds(30))
            }
        }

        @Test func theStatusReadsFromAnyThreadOrTask() async {
            // Apple's class belongs to no actor: plain code, detached tasks and
            // other threads read the status without awaiting the main actor.
            let center = AuthorizationCenter.shared
            #expect(center.authorizationStatus == .notDetermined)
            let fromTask = await Task.detached { center.authorizationStatus }.value
            #expect(fromTask == .notDetermined)
            let fromThread = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: center.authorizationStatus) }.start()
            }
            #expect(fromThread == .notDetermined)
        }

        @MainActor @Test func aCompletionHandlerGivenOnTheMainActorRunsThere() async {
            await withProcessVariables(["FAMILYCONTROLS_SOCKET": "/tmp/fc-no-guard-\(UUID().uuidString).socket"]) {
                // Not Sendable, and isolated to the main actor like a view model's closure.
                var results: [Bool] = []
                await withCheckedContinuation { continuation in
                    AuthorizationCenter.shared.revokeAuthorization { result in
                        #expect(DispatchQueue.getSpecific(key: mainKey) == true, "the handler was given on the main actor")
                        results.append((try? result.get()) != nil)
                        continuation.resume()
                    }
                }
                #expect(results == [false])
            }
        }

        @Test func aCompletionHandlerGivenElsewhereRunsOnTheLibrarysTask() async {
            await withProcessVariables(["FAMILYCONTROLS_SOCKET": "/tmp/fc-no-guard-\(UUID().uuidString).socket"]) {
                let onMain = await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        AuthorizationCenter.shared.revokeAuthorization { _ in
                            continuation.resume(returning: Thread.isMainThread || DispatchQueue.getSpecific(key: mainKey) == true)
                        }
                    }
                }
                #expect(!onMain)
            }
        }

        @MainActor @Test func observationSeesTheStatusProperty() {
            // withObservationTracking registers the read; the property is tracked.
            var tracked = false
            withObservationTracking {
                _ = AuthorizationCenter.shared.authorizationStatus
                tracked = true
            } onChange: {}
            #expect(tracked)
        }

        @Test func askpassProgramAnswersWithItsFirstLine() throws {
            let path = "/tmp/fc-askpass-\(UUID().uuidString.prefix(8))"
            let script = "#!/bin/sh\necho \"answer to $1 ($FAMILYCONTROLS_PROMPT_KIND)\"\necho second line\n"
            // Written by a shell of its own: a descriptor open for writing in this
            // process could leak into a program another test starts at that
            // moment, and the kernel refuses to run a file open for writing.
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/bin/sh")
            writer.arguments = ["-c", #"printf '%s' "$1" > "$2" && chmod 755 "$2""#, "sh", script, path]
            try writer.run()
            writer.waitUntilExit()
            defer { unlink(path) }
            try #require(writer.terminationStatus == 0)
            let prompter = AskpassPrompter(program: path)
            #expect(prompter.respond(to: AuthorizationPrompt(kind: .secret, message: "Password:")) == "answer to Password: (secret)")
            #expect(prompter.respond(to: AuthorizationPrompt(kind: .info, message: "hello")) == nil)
            #expect(AskpassPrompter(program: "/nonexistent/askpass").respond(to: AuthorizationPrompt(kind: .text, message: "x")) == nil)
        }
    }
}

private let mainKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
