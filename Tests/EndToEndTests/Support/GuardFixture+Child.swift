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
    /// guardian approves it from their own session (`familyctl approve ID`,
    /// their password on standard input); `during` runs while the request
    /// waits for the guardian (the child's chance to swap things).
    /// - Returns: the app's exit status and what it printed.
    @discardableResult
    func requestApproved(executable: String? = nil, during: () async throws -> Void = {}) async throws -> ProcessResult {
        let app = try startApp(executable: executable ?? appExecutable)
        defer { app.stop() }
        let id = try await app.waitForPendingRequest()
        try await during()
        let decided = try await familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(guardian.password ?? "")\n")
        app.endInput()
        let status = await app.exitStatus()
        guard decided.status == 0 || status != 0 else {
            throw FixtureError("familyctl approve failed but the app succeeded: \(decided.standardError)")
        }
        return ProcessResult(status: status, standardOutput: app.standardOutput,
                             standardError: app.standardError + decided.standardError)
    }

    /// Waits up to 10 s for a request of the child's to wait for a guardian,
    /// as the guardian sees it (`familyctl requests --json`).
    /// - Returns: its number.
    func waitForPendingRequest(appID: String = GuardFixture.appID) async throws -> Int64 {
        for _ in 0..<200 {
            let listed = try await familyctlAsGuardian(["requests", "--json"])
            let object = try? JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]
            let requests = object?["requests"] as? [[String: Any]] ?? []
            if let id = requests.first(where: { $0["app"] as? String == appID })?["id"] as? Int { return Int64(id) }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw FixtureError("no request of \(appID) came to wait for a guardian")
    }

    /// Runs `familyctl` as the guardian (or `user`), not root, against this Guard.
    func familyctlAsGuardian(_ arguments: [String], as user: ThrowawayUser? = nil, input: String = "") async throws -> ProcessResult {
        let who = user ?? guardian
        return try await run("/usr/bin/setpriv", ["--reuid=\(who.uid)", "--regid=\(who.gid)", "--clear-groups",
                                                  productPath("familyctl")] + arguments + ["--socket", socket], input: input)
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
