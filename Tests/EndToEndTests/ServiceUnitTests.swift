import Foundation
import Testing
import TestSupport

/// Whether `systemd-analyze` is here (Debian package systemd; `Config/install.sh
/// --packages-only` installs it). It reads unit files offline: no systemd
/// needs to be running.
let canAnalyzeUnits = FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")

/// The shipped `familycontrolsd.service`, as systemd reads it: sandboxed well
/// enough that `systemd-analyze security` calls it OK, every setting
/// understood, and the Guard's exit status for a bad configuration one that
/// stops systemd from restarting it in a loop.
@Suite struct ServiceUnitTests {
    /// The highest exposure `systemd-analyze security` still calls OK.
    static let highestExposure = 4.0

    @Test(.enabled(if: canAnalyzeUnits, "needs systemd-analyze (Debian package systemd)"))
    func theUnitsExposureIsOK() async throws {
        let result = try await run("/usr/bin/systemd-analyze", ["security", "--offline=yes", ShippedUnit.path])
        #expect(result.status == 0, "\(result.standardError)")
        // A setting systemd does not know, or a value it cannot parse, is
        // ignored with a warning, and the sandbox is weaker than it reads.
        #expect(result.standardError.isEmpty, "\(result.standardError)")
        let overall = try #require(result.standardOutput.split(separator: "\n").last { $0.contains("Overall exposure level") })
        let score = overall.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        let exposure = try #require(score, "\(overall)")
        #expect(exposure <= Self.highestExposure, "\(overall)\n\(result.standardOutput)")
    }

    @Test(.enabled(if: canAnalyzeUnits && productExists("familycontrolsd"), "needs systemd-analyze and `swift build` products"))
    func systemdAcceptsTheUnitAndItsSocket() async throws {
        try await withTemporaryDirectory { directory in
            // As Config/install.sh installs it, with the Guard where this build put it.
            let text = try String(contentsOfFile: ShippedUnit.path, encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/sbin/familycontrolsd", with: productPath("familycontrolsd"))
            try text.write(toFile: "\(directory)/familycontrolsd.service", atomically: true, encoding: .utf8)
            try FileManager.default.copyItem(atPath: "\(packageRoot)/Config/systemd/familycontrolsd.socket",
                                             toPath: "\(directory)/familycontrolsd.socket")
            let result = try await run("/usr/bin/systemd-analyze", ["verify", "--man=no", "\(directory)/familycontrolsd.service"])
            #expect(result.status == 0 && result.standardError.isEmpty, "\(result.standardError)")
        }
    }

    @Test func theGuardIsCheckedBeforeItStartsAndBeforeItReloads() throws {
        let unit = try ShippedUnit.load()
        let guardd = try #require(unit.value("ExecStart"))
        #expect(unit.values("ExecStartPre") == ["\(guardd) --check-config --configuration-only"])
        // The check first: systemd stops at a failing command, so an unsafe
        // file never reaches the running Guard.
        #expect(unit.values("ExecReload") == ["\(guardd) --check-config --configuration-only", "/bin/kill -HUP $MAINPID"])
    }

    @Test(.enabled(if: productExists("familycontrolsd"), "needs `swift build` products"))
    func anInvalidConfigurationStopsTheGuardWithAStatusSystemdDoesNotRestartOn() async throws {
        let prevented = try ShippedUnit.load().restartPreventedStatuses
        try await withTemporaryDirectory { directory in
            let config = "\(directory)/familycontrols.conf"
            try "[Family]\nGuardians=\n[Nonsense]\n".write(toFile: config, atomically: true, encoding: .utf8)
            let checked = try await run(productPath("familycontrolsd"), ["--check-config", "--config", config])
            #expect(prevented.contains(checked.status), "--check-config exited \(checked.status): \(checked.standardError)")
            let started = try await run(productPath("familycontrolsd"), ["--config", config, "--socket", "\(directory)/s",
                                                                         "--state-dir", "\(directory)/state"])
            #expect(prevented.contains(started.status), "the Guard exited \(started.status): \(started.standardError)")
        }
    }
}
