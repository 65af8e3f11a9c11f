import Foundation
import Testing
import TestSupport

/// Every audit event reaches syslog's `authpriv` as one line of key=value
/// fields: failed guardian authentications at `alert` and decisions at
/// `notice`, as sudo's are, the rest at `info`, through the real `/dev/log` protocol:
/// the Guard runs in the unit's sandbox with a `/dev/log` of the test's.
@Suite(.serialized, .enabled(if: canRunGuard && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
                             "needs root, useradd, unshare, and `swift build` products"))
struct SecurityLogTests {
    @Test func aWrongGuardianPasswordIsAnAlertAndTheApprovalANoticeAndNeitherCarriesThePassword() async throws {
        let unit = try GuardSandbox.unit()
        let fixture = try await offload { try GuardFixture(sandbox: unit) }
        defer { fixture.tearDown() }
        let receiver = try DatagramReceiver(path: "\(fixture.directory)/log.socket")
        var sandbox = unit
        sandbox.devLog = receiver.path
        fixture.sandbox = sandbox
        try await fixture.start()
        // Read as a syslog daemon does, all along: a socket nobody reads holds
        // ten datagrams, and then syslog(3) waits.
        let collecting = Task {
            try await offload { receiver.receive(until: { $0.contains { $0.contains("outcome=revoked") } }, timeout: 60) }
        }

        let app = try fixture.startApp(executable: fixture.appExecutable)
        defer { app.stop() }
        let id = try await app.waitForPendingRequest()
        let wrongPassword = "wrong-\(randomPassword())"
        let wrong = try await fixture.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(wrongPassword)\n")
        #expect(wrong.status != 0)
        let right = try await fixture.familyctlAsGuardian(["approve", String(id), "--stdin"],
                                                         input: "\(fixture.guardian.password ?? "")\n")
        #expect(right.status == 0, "\(right.standardError)")
        app.endInput()
        #expect(await app.exitStatus() == 0)

        let revoked = try await fixture.familyctl(["revoke", "--user", fixture.child.name, "--app", "org.familycontrols.Demo"])
        #expect(revoked.status == 0, "\(revoked.standardError)")
        let messages = try await collecting.value
        let child = fixture.child.name, guardian = fixture.guardian.name
        let fields = "user=\(child) app=org.familycontrols.Demo member=child"
        // authpriv (10) * 8 + alert (1) = 81; + notice (5) = 85.
        let alert = try #require(messages.first { $0.hasPrefix("<81>") }, "\(messages)")
        #expect(alert.contains("familycontrolsd["), "\(alert)")
        #expect(alert.contains("]: familycontrols: host="), "\(alert)")
        #expect(alert.contains(" action=request outcome=\"authentication failed\" \(fields) by=\(guardian)"), "\(alert)")
        let notice = try #require(messages.first { $0.hasPrefix("<85>") && $0.contains("outcome=approved") }, "\(messages)")
        #expect(notice.contains(" action=approve outcome=approved \(fields) by=\(guardian)"), "\(notice)")
        // Both name the pending request the guardian decided (`familyctl approve ID`); a root's revoke names none.
        #expect(alert.contains(" by=\(guardian) request=\(id) "), "\(alert)")
        #expect(notice.contains(" by=\(guardian) request=\(id)"), "\(notice)")
        #expect(messages.contains { $0.contains("action=revoke outcome=revoked user=\(child)") && $0.contains("by=root request=-") },
                "\(messages)")
        #expect(messages.contains { $0.hasPrefix("<85>") && $0.contains("action=revoke outcome=revoked user=\(child)")
            && $0.contains("by=root") }, "\(messages)")
        // Every event, not only decisions: the request's start is there too, at info (86).
        #expect(messages.contains { $0.hasPrefix("<86>") && $0.contains("action=request outcome=started user=\(child)") },
                "\(messages)")
        for message in messages {
            #expect(!message.contains(wrongPassword))
            #expect(!message.contains(fixture.guardian.password ?? "\u{0}"))
        }
    }
}

/// A Unix datagram socket bound at `path`, as syslog's `/dev/log` is.
private final class DatagramReceiver: @unchecked Sendable {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        chmod(path, 0o666)
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// Messages received until `done` says enough, or `timeout` seconds pass.
    func receive(until done: ([String]) -> Bool, timeout: Double) -> [String] {
        var messages: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 8192)
        while !done(messages), Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 200) > 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 { messages.append(String(decoding: buffer[..<count], as: UTF8.self)) }
        }
        return messages
    }
}
