import Foundation
import TestSupport

extension GuardFixture {
    /// Runs `command` with `/bin/sh` as `user` (default: the child), with no
    /// supplementary groups.
    func shell(_ command: String, as user: ThrowawayUser? = nil) async throws -> ProcessResult {
        let who = user ?? child
        return try await run("/usr/bin/setpriv", ["--reuid=\(who.uid)", "--regid=\(who.gid)", "--clear-groups",
                                                  "/bin/sh", "-c", command])
    }

    /// The child's app at `executable` asks for a child authorization and a
    /// guardian approves it; `during` runs while the request waits for the
    /// guardian (the child's chance to swap things).
    /// - Returns: the app's exit status and what it printed.
    func requestApproved(executable: String? = nil, during: () async throws -> Void = {}) async throws -> ProcessResult {
        let app = try startApp(executable: executable ?? appExecutable)
        defer { app.stop() }
        guard await app.waitForError(containing: "Allow “") else {
            throw FixtureError("the app never showed the alert: \(app.standardError)")
        }
        try await during()
        app.write(approvingInput)
        app.endInput()
        let status = await app.exitStatus()
        return ProcessResult(status: status, standardOutput: app.standardOutput, standardError: app.standardError)
    }

    /// Asks the Guard, as `executable` run by the child with empty input, for
    /// a child authorization: an approved app answers at once with no prompt.
    /// - Returns: whether the Guard answered "approved", and the app's output.
    func isApproved(executable: String, environment: [String: String] = [:]) async throws -> (Bool, ProcessResult) {
        let result = try await app(["request", "--member", "child", "--stdin"], input: "", executable: executable,
                                   environment: environment)
        return (result.status == 0 && result.standardOutput == "status: approved\n", result)
    }
}
