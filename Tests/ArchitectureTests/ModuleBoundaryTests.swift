import Foundation
import Testing
import TestSupport

/// The module graph of ARCHITECTURE.md, checked against the code: what each
/// module imports it depends on, the arrows run one way, the administrator's
/// command and the app library stay small, and what must be written once is.
@Suite struct ModuleBoundaryTests {
    /// Each target's declared dependencies, from the manifest as SwiftPM reads it.
    private static let manifest: Result<[String: [String]], FixtureError> = {
        do {
            let scratch = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            // A scratch path of its own, so this works while `swift test` holds the build's lock.
            let dumped = try run("/usr/bin/env", ["swift", "package", "--package-path", packageRoot,
                                                  "--scratch-path", scratch, "dump-package"])
            guard dumped.status == 0,
                  let json = try JSONSerialization.jsonObject(with: Data(dumped.standardOutput.utf8)) as? [String: Any],
                  let targets = json["targets"] as? [[String: Any]] else {
                return .failure(FixtureError("swift package dump-package failed: \(dumped.standardError)"))
            }
            var graph: [String: [String]] = [:]
            for target in targets {
                guard let name = target["name"] as? String else { continue }
                let dependencies = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                    ((dependency["byName"] ?? dependency["target"]) as? [Any])?.first as? String
                }
                graph[name] = dependencies
            }
            return .success(graph)
        } catch {
            return .failure(FixtureError("cannot read the manifest: \(error)"))
        }
    }()

    private func graph() throws -> [String: [String]] { try Self.manifest.get() }

    /// Everything `target` depends on, directly or not.
    private func closure(of target: String, in graph: [String: [String]]) -> Set<String> {
        var seen: Set<String> = []
        var stack = graph[target] ?? []
        while let next = stack.popLast() {
            if seen.insert(next).inserted { stack.append(contentsOf: graph[next] ?? []) }
        }
        return seen
    }

    /// The modules the Swift files under `directory` import.
    private func imports(under directory: String) throws -> Set<String> {
        var found: Set<String> = []
        let pattern = /^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|func|var|typealias|protocol)\s+)?(\w+)/
        guard let files = FileManager.default.enumerator(atPath: directory) else { return found }
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                if let match = line.trimmingCharacters(in: .whitespaces).firstMatch(of: pattern) {
                    found.insert(String(match.1))
                }
            }
        }
        return found
    }

    private func sourceDirectory(of target: String) -> String? {
        for parent in ["Sources", "Tests", "Plugins"] {
            let path = "\(packageRoot)/\(parent)/\(target)"
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }

    @Test func everyModuleImportsOnlyWhatItDependsOn() throws {
        let graph = try graph()
        #expect(graph.count >= 20, "the manifest lists \(graph.count) targets")
        var wrong: [String] = []
        for target in graph.keys.sorted() {
            guard let directory = sourceDirectory(of: target) else { continue }
            let allowed = closure(of: target, in: graph)
            for module in try imports(under: directory).sorted() where graph[module] != nil && module != target {
                if !allowed.contains(module) { wrong.append("\(target) imports \(module), which it does not depend on") }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }

    @Test func theArrowsRunOneWay() throws {
        let graph = try graph()
        for target in graph.keys {
            #expect(!closure(of: target, in: graph).contains(target), "\(target) depends on itself through a cycle")
        }
        // The layers, bottom up: nothing reaches a layer above its own.
        let layers: [[String]] = [
            ["CSystem", "CLibPAM", "CSQLite", "CSodium", "CSDBus", "CSDLogin", "CQRencode", "FamilyControlsModel",
             "FamilyControlsCombine"],
            ["CPAM", "SystemKit"],
            ["Varlink", "SQLite", "LockEngine", "FamilyConfiguration", "UpdateSignature", "TimeLimits"],
            ["VarlinkClientKit", "VarlinkServerKit", "GuardProtocol"],
            ["AuthorizationRules", "PAM", "GuardIdentity"],
            ["GuardStore", "GuardFlatpak", "GuardDiagnostics"],
            ["GuardSessions", "GuardPolicy"],
            ["GuardTime", "GuardTimeLimits"],
            ["GuardKit", "FamilyCtl", "FamilyCtlDesktop", "FamilyControls"],
        ]
        for (level, layer) in layers.enumerated() {
            let above = Set(layers[(level + 1)...].joined())
            for target in layer {
                let reached = closure(of: target, in: graph).intersection(above)
                #expect(reached.isEmpty, "\(target) reaches \(reached.sorted()) above it")
            }
        }
    }

    /// The Guard's rooms and what each may reach: the policy decides but
    /// neither serves nor keeps sessions; sessions and monitors decide
    /// nothing; the store, the Flatpak move and the set-up checks know
    /// neither the policy nor each other; session time acts on sessions but
    /// knows nothing of the policy; what an app is, at the bottom,
    /// knows no other room.
    static let guardRooms: [String: Set<String>] = [
        "GuardIdentity": [],
        "GuardStore": ["GuardIdentity"],
        "GuardFlatpak": ["GuardIdentity"],
        "GuardDiagnostics": ["GuardIdentity"],
        "GuardSessions": ["GuardIdentity", "GuardStore", "GuardFlatpak"],
        "GuardPolicy": ["GuardIdentity", "GuardStore", "GuardFlatpak"],
        "GuardTime": ["GuardIdentity", "GuardStore", "GuardFlatpak", "GuardSessions"],
        "GuardTimeLimits": ["GuardIdentity", "GuardStore", "GuardFlatpak", "GuardPolicy"],
        "GuardKit": ["GuardIdentity", "GuardStore", "GuardFlatpak", "GuardDiagnostics", "GuardSessions", "GuardTime",
                     "GuardPolicy", "GuardTimeLimits"],
    ]

    @Test func eachRoomOfTheGuardReachesOnlyTheRoomsBelowIt() throws {
        let graph = try graph()
        let rooms = Set(Self.guardRooms.keys)
        for (room, allowed) in Self.guardRooms {
            #expect(graph[room] != nil, "\(room) is not a target")
            let reached = closure(of: room, in: graph).intersection(rooms)
            #expect(reached == allowed, "\(room) reaches \(reached.sorted()), not \(allowed.sorted())")
        }
        // The Guard's program and nothing else of ours links the daemon's room.
        let dependents = graph.filter { $0.value.contains("GuardKit") }.map(\.key).filter { !$0.hasSuffix("Tests") }.sorted()
        #expect(dependents == ["familycontrols-bench", "familycontrolsd"], "\(dependents)")
    }

    /// Small enough to read: no module of ours over about 4,000 lines, no
    /// source file over 400.
    @Test func everyModuleAndFileStaysReadable() throws {
        var modules: [String: Int] = [:]
        var long: [String] = []
        let sources = packageRoot + "/Sources"
        guard let files = FileManager.default.enumerator(atPath: sources) else { throw FixtureError("no Sources") }
        for case let file as String in files where file.hasSuffix(".swift") || file.hasSuffix(".c") {
            let lines = try String(contentsOfFile: sources + "/" + file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count
            if lines > 400 { long.append("\(file): \(lines) lines") }
            modules[String(file.split(separator: "/")[0]), default: 0] += lines
        }
        #expect(modules["GuardPolicy", default: 0] > 1000, "the sizes were not read: \(modules)")
        #expect(long.isEmpty, "\(long.joined(separator: "\n"))")
        let large = modules.filter { $0.value > 4200 }.map { "\($0.key): \($0.value) lines" }.sorted()
        #expect(large.isEmpty, "\(large)")
    }

    @Test func theAdministratorsCommandAndTheAppLibraryStaySmall() throws {
        let graph = try graph()
        let familyctl = closure(of: "familyctl", in: graph)
        #expect(familyctl.isDisjoint(with: ["GuardKit", "GuardPolicy", "GuardStore", "SQLite", "CSQLite", "LockEngine"]),
                "familyctl links \(familyctl.sorted())")
        let app = closure(of: "FamilyControls", in: graph)
        #expect(app.isDisjoint(with: ["GuardKit", "SQLite", "CSQLite", "LockEngine", "PAM", "CPAM", "FamilyConfiguration"]),
                "apps link \(app.sorted())")
    }

    /// familyctl carries what its common verbs run: sd-bus (libsystemd) and
    /// libqrencode, which every start would load, are the desktop agent's
    /// alone, the program `familyctl agent` and `code enroll` become.
    @Test func onlyTheDesktopAgentOfTheAdministratorsCommandLinksSdBusAndLibqrencode() throws {
        let graph = try graph()
        for target in ["familyctl", "FamilyCtl"] {
            let reached = closure(of: target, in: graph)
            #expect(!reached.contains("CSDBus"), "\(target) links sd-bus")
            #expect(!reached.contains("CQRencode"), "\(target) links libqrencode")
        }
        #expect(closure(of: "familycontrols-agent", in: graph).isSuperset(of: ["FamilyCtl", "CSDBus", "CQRencode"]))
    }

    /// The request's rules are one module both Guards use: the real one and
    /// the in-memory one apps test with, and it needs neither's machinery.
    @Test func theGuardAndTheInMemoryGuardShareOneModuleOfRules() throws {
        let graph = try graph()
        for user in ["GuardPolicy", "FamilyControlsTesting"] {
            #expect(graph[user]?.contains("AuthorizationRules") == true, "\(user) does not use AuthorizationRules")
        }
        let rules = closure(of: "AuthorizationRules", in: graph)
        #expect(rules.isDisjoint(with: ["GuardKit", "GuardPolicy", "FamilyControls", "VarlinkServerKit", "VarlinkClientKit", "PAM", "SQLite",
                                        "LockEngine", "FamilyConfiguration"]),
                "AuthorizationRules reaches \(rules.sorted())")
    }

    /// Both Guards run one sequence of a request (`AppRequestFlow`) over
    /// their own steps, and neither walks it again by itself: where a
    /// request starts, and what Don't Allow and a revoke without a guardian
    /// lead to, is asked of the rules in the flow alone.
    @Test func theGuardAndTheInMemoryGuardRunOneSequence() throws {
        let sources = try ContractTypeTests.sources()
        for folder in ["GuardPolicy/", "FamilyControlsTesting/"] {
            let texts = sources.filter { $0.path.hasPrefix(folder) }
            #expect(texts.contains { $0.text.contains("AppRequestFlow(") }, "\(folder) does not run AppRequestFlow")
            #expect(texts.contains { $0.text.contains(": AppRequestSteps") }, "\(folder) supplies no AppRequestSteps")
        }
        let walks = ["AuthorizationRules.requestStart(", "AuthorizationRules.revokeStart(", "AuthorizationRules.dontAllow(",
                     "AuthorizationRules.revokeWithoutGuardian(", "AuthorizationRules.guardianDecided("]
        for source in sources where !source.path.hasPrefix("AuthorizationRules/") {
            for walk in walks {
                #expect(!source.text.contains(walk), "\(source.path) asks \(walk)…) itself, outside AppRequestFlow")
            }
        }
    }

    /// The epoll server is the Guard's alone: apps and familyctl link the client.
    @Test func onlyTheGuardLinksTheVarlinkServer() throws {
        let graph = try graph()
        for target in ["FamilyControls", "FamilyControlsTesting", "FamilyCtl", "familyctl", "familycontrols-demo"] {
            let reached = closure(of: target, in: graph)
            #expect(reached.contains("VarlinkClientKit"), "\(target) no longer links the Varlink client: \(reached.sorted())")
            #expect(!reached.contains("VarlinkServerKit"), "\(target) links the Varlink server")
        }
        #expect(closure(of: "familycontrolsd", in: graph).contains("VarlinkServerKit"))
        #expect(!closure(of: "VarlinkClientKit", in: graph).contains("VarlinkServerKit"))
        #expect(!closure(of: "VarlinkServerKit", in: graph).contains("VarlinkClientKit"))
    }

    /// Foundation's libraries are most of a Swift program's start-up time and
    /// resident memory: the Guard and familyctl (which pkcheck and polkitd are
    /// measured against) use the standard library and Glibc only.
    @Test func theGuardAndFamilyctlDoNotLoadFoundation() throws {
        let graph = try graph()
        for product in ["familycontrolsd", "familyctl"] {
            for target in (closure(of: product, in: graph).union([product])).sorted() {
                guard let directory = sourceDirectory(of: target) else { continue }
                let foundation = try imports(under: directory).filter { $0.hasPrefix("Foundation") || $0 == "Dispatch" }
                #expect(foundation.isEmpty, "\(target), part of \(product), imports \(foundation.sorted())")
            }
        }
    }

    /// The parsers of a child's bytes stay free of system calls and of every
    /// other module but Flatpak's naming rules, so the unprivileged inspector
    /// that runs them needs nothing else.
    @Test func theParsersOfAChildsBytesImportOnlyFlatpaksNamingRules() throws {
        let graph = try graph()
        #expect(closure(of: "ChildInspection", in: graph) == ["FlatpakNames"])
        let directory = try #require(sourceDirectory(of: "ChildInspection"))
        #expect(try imports(under: directory) == ["FlatpakNames"])
        #expect(try imports(under: #require(sourceDirectory(of: "FlatpakNames"))).isEmpty)
    }

    /// The formats a child or a remote writes, each parsed by the inspector alone.
    static let parsersOfAChildsBytes = [
        "DesktopEntry(parsing", "FlatpakInfo(parsing", "MemoryMap.executableMappings", "OstreeCommitObject(parsing",
        "OstreeCommitObject.tupleMembers", "DeploymentOrigin.origin", "OpenPGPKeyringPackets(parsing",
        "RepositoryRemote.remote", "SHA1.digest",
    ]

    /// No module the Guard's own process runs can parse what a child wrote:
    /// the parsers live in ChildInspection, which only the inspector's
    /// answers (InspectorService) link, which only familycontrols-inspect and
    /// the benchmark link; no other source calls them.
    @Test func theGuardsProcessLinksNoParserOfAChildsBytes() throws {
        let graph = try graph()
        for program in ["familycontrolsd", "familyctl", "familycontrols-demo"] {
            #expect(!closure(of: program, in: graph).contains("ChildInspection"), "\(program) links the parsers of a child's bytes")
        }
        let dependents = { (module: String) in graph.filter { $0.value.contains(module) }.map(\.key).filter { !$0.hasSuffix("Tests") }.sorted() }
        #expect(dependents("ChildInspection") == ["InspectorService"])
        #expect(dependents("InspectorService") == ["familycontrols-bench", "familycontrols-inspect"])
        for parser in Self.parsersOfAChildsBytes {
            let calls = try sourceLines(containing: parser).filter {
                !$0.hasPrefix("ChildInspection/") && !$0.hasPrefix("InspectorService/")
            }
            #expect(calls.isEmpty, "\(parser) outside the inspector: \(calls)")
        }
    }

    /// Lines of Swift under Sources that contain `needle`, outside `except`.
    private func sourceLines(containing needle: String, except: String? = nil) throws -> [String] {
        let sources = packageRoot + "/Sources"
        var hits: [String] = []
        guard let files = FileManager.default.enumerator(atPath: sources) else { return hits }
        for case let file as String in files where file.hasSuffix(".swift") && file != except {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(needle) && !line.trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                hits.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return hits
    }

    @Test func theEndpointIsWrittenOnce() throws {
        let endpoint = "FamilyControlsModel/GuardEndpoint.swift"
        for literal in ["\"/run/familycontrols/guard.socket\"", "\"FAMILYCONTROLS_SOCKET\"", "\"org.familycontrols.guard\""] {
            let elsewhere = try sourceLines(containing: literal, except: endpoint)
            #expect(elsewhere.isEmpty, "\(literal) is written again: \(elsewhere)")
            #expect(try !sourceLines(containing: literal).isEmpty, "\(literal) is not in \(endpoint) any more")
        }
    }

    @Test func noFunctionIsLookedUpAtRunTime() throws {
        let lookups = try sourceLines(containing: "dlsym") + sourceLines(containing: "dlopen")
        #expect(lookups.isEmpty, "\(lookups)")
    }

    @Test func theGuardInterfaceIsEmbeddedFromConfigNotCopied() throws {
        let idl = try String(contentsOfFile: packageRoot + "/Config/org.familycontrols.guard.varlink", encoding: .utf8)
        let distinctive = try #require(idl.split(separator: "\n").first { $0.hasPrefix("method ") })
        #expect(try sourceLines(containing: String(distinctive)).isEmpty, "the interface text is copied into Swift")
    }
}
