import Foundation
import Testing
import TestSupport

/// The installed programs carry the Swift runtime: they name no toolchain
/// library, and they run, the Guard serving, familyctl asking it and the
/// inspector reading a desktop entry, where the toolchain cannot be reached.
@Suite(.enabled(if: NoToolchain.available, "needs root, unshare, readelf and a debug build (its RUNPATH names the toolchain)"),
       .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct StaticRuntimeTests {
    @Test(arguments: ReleaseBuild.products)
    func theInstalledProgramNeedsNoToolchainLibrary(product: String) async throws {
        let bin = try await ReleaseBuild.binDirectory()
        let dynamic = try await run("/usr/bin/readelf", ["-d", "\(bin)/\(product)"]).requireSuccess().standardOutput
        let lines = dynamic.split(separator: "\n")
        #expect(!lines.contains { $0.contains("(RUNPATH)") || $0.contains("(RPATH)") }, "\(dynamic)")
        for library in ["libswiftCore", "libFoundation", "libdispatch", "libBlocksRuntime"] {
            #expect(!lines.contains { $0.contains("(NEEDED)") && $0.contains("[\(library)") }, "\(product) needs \(library)")
        }
    }

    @Test func withoutTheToolchainTheDebugBuildCannotStartSoTheSandboxIsReal() async throws {
        let result = try await NoToolchain.sh(#""$1" --help"#, [productPath("familyctl")])
        #expect(result.status == 127, "\(result.status) \(result.standardError)")
        #expect(result.standardError.contains("error while loading shared libraries: libswift"), "\(result.standardError)")
    }

    @Test func withoutTheToolchainTheReleaseProgramsRunAndTheGuardServes() async throws {
        let bin = try await ReleaseBuild.binDirectory()
        try await withTemporaryDirectory { directory in
            chmod(directory, 0o755)
            try FileManager.default.createDirectory(atPath: "\(directory)/pam.d", withIntermediateDirectories: true)
            for service in ["familycontrols-guardian", "familycontrols-individual"] {
                try FileManager.default.copyItem(atPath: "\(packageRoot)/pam.d/\(service)", toPath: "\(directory)/pam.d/\(service)")
            }
            try FileManager.default.copyItem(atPath: "\(packageRoot)/Config/familycontrols.conf", toPath: "\(directory)/familycontrols.conf")
            // $1: the programs' folder; $2: this test's folder. The toolchain is
            // checked gone first, so a pass cannot come from a sandbox that failed.
            let script = #"""
                set -e
                if [ -e "$TOOLCHAIN_SWIFT" ]; then echo "the toolchain is still there" >&2; exit 91; fi
                "$1/familyctl" --help | head -n 1
                "$1/familycontrolsd" --version
                "$1/familycontrols-demo" --help | head -n 1
                printf '[Desktop Entry]\nName=Demo\n' > "$2/entry.desktop"
                "$1/familycontrols-inspect" '{"method":"org.familycontrols.inspect.ReadDesktopEntry"}' \
                    < "$2/entry.desktop" > "$2/entry.reply"
                tr '\0' '\n' < "$2/entry.reply"
                "$1/familycontrolsd" --check-config --config "$2/familycontrols.conf" --pam-dir "$2/pam.d"
                "$1/familycontrolsd" --socket "$2/guard.socket" --state-dir "$2/state" \
                    --config "$2/familycontrols.conf" --pam-dir "$2/pam.d" 2>"$2/guard.log" &
                guard=$!
                tries=0
                until "$1/familyctl" --socket "$2/guard.socket" status 2>/dev/null; do
                    tries=$((tries + 1))
                    if [ "$tries" -gt 200 ] || ! kill -0 "$guard"; then cat "$2/guard.log" >&2; exit 92; fi
                    sleep 0.05
                done
                kill "$guard"
                wait "$guard"
                """#
            let toolchain = NoToolchain.toolchain ?? "/opt/swift"
            let result = try await NoToolchain.sh("TOOLCHAIN_SWIFT='\(toolchain)/usr/bin/swift'\n" + script, [bin, directory])
            #expect(result.status == 0, "\(result.status): \(result.standardError)")
            let lines = result.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.first == "usage: familyctl [--socket PATH] VERB [OPTIONS]", "\(lines)")
            #expect(lines.dropFirst().first?.hasPrefix("familycontrolsd ") == true, "\(lines)")
            #expect(lines.dropFirst(2).first?.hasPrefix("usage: familycontrols-demo") == true, "\(lines)")
            #expect(lines.dropFirst(3).first?.hasPrefix(#"{"parameters":{"entry":{"name":"Demo","#) == true, "\(lines)")
            #expect(lines.contains("familycontrolsd: \(directory)/familycontrols.conf: OK"), "\(lines)")
            #expect(lines.last == "No authorizations.", "\(lines)")
        }
    }
}
