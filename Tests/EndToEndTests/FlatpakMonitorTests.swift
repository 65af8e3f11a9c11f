import Foundation
import Testing
import TestSupport
import Varlink

/// A Flatpak app's monitor: declared in the deployment's desktop entry and
/// run by the real Guard with `flatpak run --command=/app/PROGRAM` as the
/// child, in the app's real sandbox.
@Suite(.serialized, .enabled(if: canRunFlatpak, "needs root, useradd, and Debian's flatpak and dbus (.ci/run installs them)"))
struct FlatpakMonitorTests {
    @Test func anApprovedFlatpakAppsMonitorRunsInItsSandboxAndComesBackAfterAKill() async throws {
        try await withGuardedFlatpakChild { guardd, child in
            // The app as its next version declares a monitor: the app's own program.
            _ = try await offload { try child.repository.publish(version: 2, monitor: "bin/\(FlatpakTestRepository.command)") }
            try await child.update().requireSuccess()
            #expect(try await guardd.flatpakRequestApproved(child).status == 0, "\(guardd.log)")
            // A session of the child's, told as the PAM session module tells one; its leader is this process.
            let token = String((0..<32).map { _ in "0123456789abcdef".randomElement()! })
            _ = try await guardd.call("OpenSession", ["token": .string(token), "user": .string(child.user.name),
                                                      "service": .string("login"),
                                                      "runtimeDirectory": .string("\(child.directory)/run")])
            var monitors: [JSONObject] = []
            for _ in 0..<100 {
                monitors = try await guardd.call("ListMonitors")["monitors"]?.arrayValue?.compactMap(\.objectValue) ?? []
                if guardd.log.contains("monitor \(FlatpakChild.appID) for \(child.user.name): \(FlatpakChild.appID) version 2") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(guardd.log.contains("monitor \(FlatpakChild.appID) for \(child.user.name): \(FlatpakChild.appID) version 2"),
                    "the monitor ran in the sandbox: \(guardd.log.suffix(3000))")
            // The listing read just before the monitor's line may be of a moment it was not yet released.
            for _ in 0..<50 where monitors.first?["state"]?.stringValue != "running" {
                try await Task.sleep(for: .milliseconds(100))
                monitors = try await guardd.call("ListMonitors")["monitors"]?.arrayValue?.compactMap(\.objectValue) ?? []
            }
            let pid = try #require(monitors.first?["pid"]?.intValue, "\(monitors)")
            // flatpak run became bubblewrap, which runs the app's program as /app/bin/PROGRAM.
            let sandboxed = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8).split(separator: "\0")
            #expect(sandboxed.first?.hasSuffix("bwrap") == true, "\(sandboxed)")
            #expect(sandboxed.contains("/app/bin/\(FlatpakTestRepository.command)"), "\(sandboxed)")

            let kill = try await child.shell("kill -9 \(pid)")
            #expect(kill.status == 0, "\(kill.standardError)")
            var back: Int64?
            for _ in 0..<100 {
                let now = try await guardd.call("ListMonitors")["monitors"]?.arrayValue?.compactMap(\.objectValue) ?? []
                if let next = now.first?["pid"]?.intValue, next != pid, now.first?["state"]?.stringValue == "running" {
                    back = next
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(back != nil, "started again: \(guardd.log.suffix(2000))")
            _ = try await guardd.call("CloseSession", ["token": .string(token)])
        }
    }
}
