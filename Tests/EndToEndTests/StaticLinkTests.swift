import Foundation
import Testing
import TestSupport

/// How `Config/build.sh` links the installed programs, each choice made for
/// their start time and resident memory (familycontrols-bench anchors), and
/// each one a promise that a later change could quietly break.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/nm")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/readelf"), "needs nm and readelf (binutils)"))
struct StaticLinkTests {
    @Test(arguments: ReleaseBuild.products)
    func theCxxRuntimeIsLinkedInAndNothingIsExported(product: String) async throws {
        let path = "\(try await ReleaseBuild.binDirectory())/\(product)"
        let dynamic = try await run("/usr/bin/readelf", ["-d", path]).requireSuccess().standardOutput
        let needed = dynamic.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty, "\(dynamic)")
        for library in ["libstdc++", "libgcc_s"] {
            #expect(!needed.contains { $0.contains("[\(library)") }, "\(product) loads \(library)")
        }
        #expect(dynamic.contains("(RELR)"), "\(product): relative relocations are not packed\n\(dynamic)")
        let exported = try await run("/usr/bin/nm", ["-D", "--defined-only", path]).requireSuccess().standardOutput
        #expect(exported.split(separator: "\n").isEmpty, "\(product) exports:\n\(exported.prefix(2000))")
    }

    /// The compiler's writable constants are linked into .data.rel.ro
    /// (Config/sections.ld): .rodata stays read-only, in a segment that is
    /// not writable, where an idle Guard can let go of its pages.
    @Test(arguments: ReleaseBuild.products)
    func readOnlyDataIsReadOnly(product: String) async throws {
        let path = "\(try await ReleaseBuild.binDirectory())/\(product)"
        let sections = try await run("/usr/bin/readelf", ["-S", "-W", path]).requireSuccess().standardOutput
        let rodata = try #require(sections.split(separator: "\n").first { $0.contains(" .rodata ") }, "\(sections)")
        // [Nr] Name Type Address Off Size ES Flg Lk Inf Al: the flags are the eighth field.
        let fields = rodata.split(separator: "]", maxSplits: 1).last?.split(separator: " ") ?? []
        #expect(fields.count >= 7 && !fields[6].contains("W"), "\(product): \(rodata)")
        let segments = try await run("/usr/bin/readelf", ["-l", "-W", path]).requireSuccess().standardOutput
        let address = try #require(fields.count >= 3 ? UInt64(fields[2], radix: 16) : nil, "\(rodata)")
        let holding = segments.split(separator: "\n").filter { $0.contains("LOAD") }.first { line in
            let parts = line.split(separator: " ")
            guard parts.count >= 7, let start = UInt64(parts[2].dropFirst(2), radix: 16),
                  let size = UInt64(parts[5].dropFirst(2), radix: 16) else { return false }
            return start <= address && address < start + size
        }
        #expect(holding.map { !$0.contains("RW") } == true, "\(product): .rodata at \(String(address, radix: 16)) in \(holding ?? "no segment")")
    }

    /// Every library a program needs is loaded, relocated and initialized at
    /// each start, whether the verb runs it or not: libsystemd and its tail
    /// (libgcrypt, liblzma, libzstd, liblz4, libcap) cost familyctl half a
    /// millisecond of every `status`. Only the desktop agent, the program
    /// `familyctl agent` and `code enroll` become, talks to the session bus
    /// and draws QR codes.
    @Test func familyctlDoesNotLoadLibsystemdOrLibqrencodeOnlyTheDesktopAgentDoes() async throws {
        let bin = try await ReleaseBuild.binDirectory()
        func needed(_ product: String) async throws -> [String] {
            let dynamic = try await run("/usr/bin/readelf", ["-d", "\(bin)/\(product)"]).requireSuccess().standardOutput
            return dynamic.split(separator: "\n").filter { $0.contains("(NEEDED)") }.map(String.init)
        }
        let familyctl = try await needed("familyctl")
        #expect(familyctl.contains { $0.contains("[libc.so") }, "\(familyctl)")
        for library in ["libsystemd", "libqrencode"] {
            #expect(!familyctl.contains { $0.contains("[\(library)") }, "familyctl loads \(library): \(familyctl)")
            let agent = try await needed("familycontrols-agent")
            #expect(agent.contains { $0.contains("[\(library)") }, "the agent does not load \(library): \(agent)")
        }
    }

    /// Linked statically, the Swift runtime finds the command line at every
    /// start by reading and parsing /proc/self/maps (CommandLine.cpp's
    /// `argvGrabber`), about 6% of `familyctl --version`: CSystem hands it
    /// argv from `.init_array` instead, so the runtime's reader is not linked
    /// in, and the programs still get their arguments.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace (Config/install.sh installs it)"),
          arguments: [("familyctl", ["help", "status"], "usage: familyctl status"),
                      ("familycontrols-agent", ["help", "status"], "usage: familyctl status"),
                      ("familycontrolsd", ["--version"], "familycontrolsd ")])
    func theProgramsGetTheirCommandLineWithoutReadingProcSelfMaps(product: String, arguments: [String], answer: String) async throws {
        let path = "\(try await ReleaseBuild.binDirectory())/\(product)"
        #expect(!(try await symbolNames(of: path)).contains { $0.contains("argvGrabber") }, "\(product) links the runtime's argv reader")
        let traced = try await run("/usr/bin/strace", ["-f", "-e", "trace=open,openat", "-o", "/dev/stderr", path] + arguments)
        #expect(traced.status == 0, "\(traced.standardError)")
        #expect(traced.standardOutput.hasPrefix(answer), "\(traced.standardOutput)")
        #expect(!traced.standardError.contains("/proc/self/maps"), "\(traced.standardError)")
    }

    /// One `ContinuousClock` or `String.contains(String)` links Swift's
    /// concurrency runtime with libdispatch, or the regex engine: a megabyte
    /// each, and a libdispatch initializer at every start; one `import
    /// Foundation` links Foundation in. The inspector starts once for every
    /// file the Guard has read, so it stays as lean as the Guard.
    @Test(arguments: ["familycontrolsd", "familyctl", "familycontrols-inspect"])
    func theGuardFamilyctlAndTheInspectorCarryNoFoundationConcurrencyRuntimeDispatchOrRegexEngine(product: String) async throws {
        let symbols = try await symbolNames(of: "\(try await ReleaseBuild.binDirectory())/\(product)")
        #expect(symbols.count > 1_000, "the symbol table is missing: \(symbols.count) symbols")
        let unwanted = [("swift_task_create", "the concurrency runtime"), ("libdispatch_init", "libdispatch"),
                        ("$s17_StringProcessing", "_StringProcessing"), ("$s12_RegexParser", "_RegexParser"),
                        ("$s10Foundation", "Foundation"), ("$s20FoundationEssentials", "FoundationEssentials")]
        for (prefix, what) in unwanted {
            let found = symbols.filter { $0.hasPrefix(prefix) }
            #expect(found.isEmpty, "\(product) links \(what): \(found.prefix(5))")
        }
    }

    /// `Config/build.sh` recorded the start-up order from these very programs
    /// (`Config/text-order.sh`, its list and stamp in the build folder), and
    /// the linker honoured it: the functions it lists sit together instead
    /// of across the Guard's code.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/valgrind"),
                   "build.sh records the order only as root with valgrind"))
    func theRecordedOrderIsTheProgramsOwnAndPacksTheGuardsStartUpCode() async throws {
        let bin = try await ReleaseBuild.binDirectory()
        let folder = ReleaseBuild.buildFolder(of: bin)
        let programs = try await run("/bin/sh", ["-c", #"cat "$0/familycontrolsd" "$0/familyctl" | sha256sum | cut -c1-64"#, bin])
            .requireSuccess().standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let stamp = try String(contentsOfFile: "\(folder)/text-order.stamp", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(stamp == programs, "the list in \(folder) was not recorded from the programs built")
        let listed = try String(contentsOfFile: "\(folder)/text-order.txt", encoding: .utf8)
            .split(separator: "\n").map(String.init)
        #expect(listed.count > 500)
        let guardFunctions = try await functions(of: "\(bin)/familycontrolsd")
        let familyctlFunctions = try await functions(of: "\(bin)/familyctl")
        let modules = ["SystemKit", "Varlink", "VarlinkClientKit", "VarlinkServerKit", "GuardProtocol", "GuardKit", "FamilyCtl",
                       "LockEngine", "FamilyConfiguration", "PAM", "SQLite", "FamilyControlsModel"]
        let ownPrefixes = modules.map { "$s\($0.utf8.count)\($0)" } + ["csystem_"]
        let own = listed.filter { name in ownPrefixes.contains { name.hasPrefix($0) } }
        #expect(own.count > 100, "the list names \(own.count) of the project's functions")
        let known = own.filter { guardFunctions[$0] != nil || familyctlFunctions[$0] != nil }
        #expect(known.count == own.count, "\(own.count - known.count) project functions in the list are not in the programs")

        let block = 65_536
        var blocks = Set<Int>()
        for name in listed {
            guard let (address, size) = guardFunctions[name] else { continue }
            blocks.formUnion(address / block...(address + max(size, 1) - 1) / block)
        }
        let sections = try await run("/usr/bin/readelf", ["-S", "-W", "\(bin)/familycontrolsd"]).requireSuccess().standardOutput
        let text = try #require(sections.split(separator: "\n").first { $0.contains(" .text ") })
        let fields = text.split(separator: " ")
        let textIndex = try #require(fields.firstIndex(of: ".text"))
        let textSize = try #require(Int(fields[textIndex + 4], radix: 16))
        let textBlocks = (textSize + block - 1) / block
        // Unordered, these functions touch over 80% of the blocks.
        #expect(Double(blocks.count) <= 0.6 * Double(textBlocks),
                "the listed functions touch \(blocks.count) of \(textBlocks) 64 KB blocks of code")
    }

    private func symbolNames(of path: String) async throws -> [String] {
        let output = try await run("/usr/bin/nm", [path]).requireSuccess().standardOutput
        return output.split(separator: "\n").compactMap { line in line.split(separator: " ").last.map(String.init) }
    }

    /// Each function's address and size, from the symbol table.
    private func functions(of path: String) async throws -> [String: (Int, Int)] {
        let output = try await run("/usr/bin/nm", ["-S", path]).requireSuccess().standardOutput
        var result: [String: (Int, Int)] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 4, "tTwW".contains(fields[2]),
                  let address = Int(fields[0], radix: 16), let size = Int(fields[1], radix: 16) else { continue }
            result[String(fields[3])] = (address, size)
        }
        return result
    }
}
