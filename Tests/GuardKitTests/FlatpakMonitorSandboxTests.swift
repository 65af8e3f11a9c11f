import Foundation
@testable import GuardKit
import LockEngine
import SystemKit
import Testing
import TestSupport
@testable import GuardSessions

/// What a process shows of its Flatpak sandbox: its root (`/proc/PID/root`)
/// holds `.flatpak-info` and an `app` folder, judged by the folder's device
/// and inode, never by a path. A process chrooted into a folder laid out so
/// stands in for bubblewrap's sandbox.
@Suite(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
                "needs root (chroot) and python3"))
struct FlatpakMonitorSandboxTests {
    /// A process whose root is `root`, the child of a shell that waits for it.
    private func chrooted(_ root: String, _ body: (_ shell: pid_t, _ inside: pid_t) throws -> Void) throws {
        let script = "import os, sys, time\nos.chroot(sys.argv[1])\nprint('in', flush=True)\ntime.sleep(60)\n"
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "/usr/bin/python3 -c \"$0\" \"$1\"; :", script, root]
        let output = Pipe()
        shell.standardOutput = output
        try shell.run()
        defer { kill(shell.processIdentifier, SIGKILL); shell.waitUntilExit() }
        // The python child prints once it is chrooted.
        let line = output.fileHandleForReading.availableData
        #expect(String(decoding: line, as: UTF8.self).hasPrefix("in"))
        let parent = shell.processIdentifier
        let inside = try #require(FlatpakMonitorSandbox.descendants(of: parent).first, "no child of the shell")
        defer { kill(inside, SIGKILL) }
        try body(parent, inside)
    }

    private func identity(_ path: String) throws -> FileIdentity {
        try OpenedDirectory.open(path).identity
    }

    @Test func aSandboxWhoseAppIsTheApprovedFilesIsApprovedAndAnotherIsNot() throws {
        try withTemporaryDirectorySync { root in
            try FileManager.default.createDirectory(atPath: "\(root)/app", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: "\(root)/elsewhere", withIntermediateDirectories: true)
            try "[Application]\nname=org.example.App\n".write(toFile: "\(root)/.flatpak-info", atomically: false, encoding: .utf8)
            let approved = try identity("\(root)/app"), decoy = try identity("\(root)/elsewhere")
            try chrooted(root) { shell, inside in
                #expect(FlatpakMonitorSandbox.judge(inside, files: approved) == .approved)
                #expect(FlatpakMonitorSandbox.judge(inside, files: decoy) == .another(approved))
                // Through the process the Guard started: its descendants.
                #expect(FlatpakMonitorSandbox.judge(descendantsOf: shell, files: approved) == .approved)
                #expect(FlatpakMonitorSandbox.judge(descendantsOf: shell, files: decoy) == .another(approved))
                // The shell itself is on the host's root: no sandbox.
                #expect(FlatpakMonitorSandbox.judge(shell, files: approved) == .notSandboxed)
            }
        }
    }

    @Test func aRootWithoutFlatpakInfoOrWithAnAppLinkIsNoSandbox() throws {
        try withTemporaryDirectorySync { root in
            try FileManager.default.createDirectory(atPath: "\(root)/real", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: "\(root)/app", withDestinationPath: "real")
            let real = try identity("\(root)/real")
            try chrooted(root) { _, inside in
                #expect(FlatpakMonitorSandbox.judge(inside, files: real) == .notSandboxed)
                try "x".write(toFile: "\(root)/.flatpak-info", atomically: false, encoding: .utf8)
                // `app` a link to the approved folder: not followed.
                #expect(FlatpakMonitorSandbox.judge(inside, files: real) == .notSandboxed)
            }
        }
    }
}
