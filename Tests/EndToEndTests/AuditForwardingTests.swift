import Foundation
import Testing
import TestSupport

/// The audit trail reaches a school's central log server through the
/// forwarder it already runs: the Guard, in the shipped unit's sandbox,
/// logs to a real rsyslogd (as `/dev/log`), which forwards `authpriv` over
/// TCP to a second real rsyslogd on 127.0.0.1, the "central" one.
@Suite(.serialized, .enabled(if: canRunGuard && FileManager.default.isExecutableFile(atPath: "/usr/sbin/rsyslogd")
                             && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
                             "needs root, useradd, unshare, rsyslogd (Debian's rsyslog) and `swift build` products"))
struct AuditForwardingTests {
    /// A rsyslogd of the test's own, in the foreground, with `configuration`.
    private func startRsyslogd(_ name: String, in directory: String, _ configuration: String) throws -> Process {
        let work = "\(directory)/\(name)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        try "global(workDirectory=\"\(work)\")\n\(configuration)".write(toFile: "\(work).conf", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/rsyslogd")
        process.arguments = ["-n", "-f", "\(work).conf", "-i", "\(work).pid"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        return process
    }

    /// Ends a rsyslogd at once: a forwarder with a queue waits on SIGTERM
    /// for its queue to drain, which a test has no use for.
    private func stop(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    @Test func anApprovalReachesTheCentralLogServerWithItsFields() async throws {
        let unit = try GuardSandbox.unit()
        let fixture = try await offload { try GuardFixture(sandbox: unit) }
        defer { fixture.tearDown() }
        let directory = fixture.directory
        let port = 20_000 + Int(getpid() % 20_000)
        let central = try startRsyslogd("central", in: directory, """
            module(load="imtcp")
            input(type="imtcp" address="127.0.0.1" port="\(port)")
            template(name="line" type="string" string="%syslogfacility-text%.%syslogseverity-text% %programname%: %msg%\\n")
            *.* action(type="omfile" file="\(directory)/central.log" template="line")

            """)
        defer { stop(central) }
        let local = try startRsyslogd("local", in: directory, """
            module(load="imuxsock" SysSock.Use="off")
            input(type="imuxsock" Socket="\(directory)/log.socket")
            authpriv.* action(type="omfwd" target="127.0.0.1" port="\(port)" protocol="tcp"
                              action.resumeRetryCount="100" queue.type="LinkedList")

            """)
        defer { stop(local) }
        #expect(await eventually { FileManager.default.fileExists(atPath: "\(directory)/log.socket") }, "rsyslogd made no socket")

        var sandbox = unit
        sandbox.devLog = "\(directory)/log.socket"
        fixture.sandbox = sandbox
        try await fixture.start()
        try await fixture.requestApproved().requireSuccess()

        let child = fixture.child.name, guardian = fixture.guardian.name
        let wanted = "action=approve outcome=approved user=\(child) app=org.familycontrols.Demo member=child by=\(guardian)"
        var received = ""
        for _ in 0..<100 {
            received = (try? String(contentsOfFile: "\(directory)/central.log", encoding: .utf8)) ?? ""
            if received.contains(wanted) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let line = try #require(received.split(separator: "\n").first { $0.contains(wanted) }, "central.log: \(received)")
        // rsyslog's %msg% keeps the space after the tag's colon.
        #expect(line.hasPrefix("authpriv.notice familycontrolsd:") && line.contains(" familycontrols: host="), "\(line)")
        #expect(line.contains(" id="), "\(line)")
        #expect(!received.contains(fixture.guardian.password ?? "\u{0}"))
    }
}
