// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FamilyControls",
    products: [
        .library(name: "FamilyControls", targets: ["FamilyControls"]),
        // For an app's own tests: an in-memory Guard that drives AuthorizationCenter.
        .library(name: "FamilyControlsTesting", targets: ["FamilyControlsTesting"]),
        .executable(name: "familycontrolsd", targets: ["familycontrolsd"]),
        .executable(name: "familyctl", targets: ["familyctl"]),
        .executable(name: "familycontrols-demo", targets: ["familycontrols-demo"]),
        .executable(name: "familycontrols-inspect", targets: ["familycontrols-inspect"]),
        .executable(name: "familycontrols-agent", targets: ["familycontrols-agent"]),
    ],
    targets: [
        // C: the system libraries, and the small shims that must be C (the PAM
        // conversation; the Linux calls Glibc declares badly or not at all).
        .systemLibrary(
            name: "CLibPAM",
            providers: [.apt(["libpam0g-dev"])]
        ),
        // libpam itself is loaded at the first transaction (cpam.c says why).
        .target(
            name: "CPAM",
            dependencies: ["CLibPAM"]
        ),
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Ed25519 signatures and BLAKE2b hashes of app updates: libsodium, not our own crypto.
        .systemLibrary(
            name: "CSodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // The QR code `familyctl code enroll` draws: libqrencode.
        .systemLibrary(
            name: "CQRencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        // The Linux calls the Glibc module leaves out or declares badly.
        .target(name: "CSystem"),
        // Desktop notifications on the session bus, and logind's LockSession and
        // TerminateSession on the system bus, through libsystemd's sd-bus
        // (whose message calls are variadic, so a C shim builds them).
        .target(name: "CSDBus", linkerSettings: [.linkedLibrary("systemd")]),
        // The login sessions systemd-logind keeps, through libsystemd's sd-login.
        .target(name: "CSDLogin", linkerSettings: [.linkedLibrary("systemd")]),
        .target(name: "CSDJournal", linkerSettings: [.linkedLibrary("systemd")]),
        // pam_familycontrols.so: keeps a child's login hours and daily time in the account phase, and
        // tells the Guard a login session opened or closed. Compiled here so every build checks it;
        // linked, against libpam and libc alone, by Config/build-pam-module.sh.
        .target(
            name: "pam_familycontrols",
            dependencies: ["CLibPAM"],
            linkerSettings: [.linkedLibrary("pam")]
        ),

        // Swift libraries: all the logic lives here, where tests reach it.
        // Each depends only on those listed before it (ARCHITECTURE.md).
        .target(name: "SystemKit", dependencies: ["CSystem"]),
        // Flatpak's names (app IDs, branches, refs, commits) by Flatpak's rules.
        .target(name: "FlatpakNames"),
        // Parsers of bytes a child or a remote wrote, without SystemKit: only
        // the unprivileged inspector (familycontrols-inspect) runs them, never
        // the Guard (ArchitectureTests checks the Guard cannot link them).
        .target(name: "ChildInspection", dependencies: ["FlatpakNames"]),
        // Varlink in three: the messages every side shares (JSON, framing,
        // names, errors), the blocking client apps and familyctl use, and the
        // epoll server only the Guard runs.
        .target(name: "Varlink", dependencies: ["SystemKit"]),
        .target(name: "VarlinkClientKit", dependencies: ["Varlink", "SystemKit"]),
        .target(name: "VarlinkServerKit", dependencies: ["Varlink", "SystemKit"]),
        // The public value types and the Guard's endpoint, without Foundation,
        // so the Guard can share them without loading Foundation; FamilyControls
        // re-exports them.
        .target(name: "FamilyControlsModel"),
        // The rules of an app's request and revoke, pure, shared by the Guard
        // and the in-memory Guard apps test with, so the two cannot drift.
        .target(name: "AuthorizationRules", dependencies: ["FamilyControlsModel", "GuardProtocol"]),
        // The Guard's interface as types, generated from Config/ at build time.
        .target(name: "GuardProtocol", dependencies: ["Varlink", "SystemKit", "FamilyControlsModel"],
                plugins: ["EmbedInterface"]),
        .target(name: "SQLite", dependencies: ["CSQLite", "SystemKit"]),
        // PAM transactions, in-process or in the Guard's helper process,
        // whose conversation is the generated interface of GuardProtocol.
        .target(name: "PAM", dependencies: ["CPAM", "SystemKit", "GuardProtocol", "Varlink"]),
        .target(name: "LockEngine", dependencies: ["SystemKit"]),
        .target(name: "FamilyConfiguration", dependencies: ["SystemKit"]),
        // A child's login hours and daily time as an app sets them: their
        // syntax, how limits combine, and whether a moment is allowed. Pure,
        // shared by the Guard, familyctl and the library.
        .target(name: "TimeLimits", dependencies: ["SystemKit"]),
        // Whether a staged version of an app is signed by the key of the
        // approved one: its manifest, walked by descriptor, and Ed25519 over it.
        .target(name: "UpdateSignature", dependencies: ["CSodium", "SystemKit"]),
        // The Guard, in rooms, each depending only on those before it
        // (ARCHITECTURE.md, checked by ModuleBoundaryTests):
        // what an app is (identification through the inspector, Flatpak
        // deployments, staged versions' signatures) and the Guard's bounds;
        .target(
            name: "GuardIdentity",
            dependencies: ["FamilyConfiguration", "FlatpakNames", "GuardProtocol", "LockEngine", "SystemKit",
                           "UpdateSignature", "Varlink"]
        ),
        // the store (SQLite): authorizations, the lock journal, the audit trail;
        .target(
            name: "GuardStore",
            dependencies: ["GuardIdentity", "FamilyConfiguration", "FamilyControlsModel", "LockEngine", "SQLite",
                           "SystemKit", "UpdateSignature"]
        ),
        // the Flatpak move into the Guard's installation and the judging of new commits;
        .target(
            name: "GuardFlatpak",
            dependencies: ["GuardIdentity", "FamilyConfiguration", "FlatpakNames", "GuardProtocol", "LockEngine",
                           "SystemKit", "Varlink"]
        ),
        // login sessions (logind or the PAM module), and the monitors kept running in them;
        .target(
            name: "GuardSessions",
            dependencies: ["GuardIdentity", "GuardStore", "GuardFlatpak", "FamilyConfiguration", "FamilyControlsModel",
                           "GuardProtocol", "LockEngine", "SystemKit", "CSDLogin", "CSDBus"]
        ),
        // session time: counted per child and day, the login-limits file the PAM
        // module reads, warnings, and the lock or end of sessions when it is up;
        .target(
            name: "GuardTime",
            dependencies: ["GuardIdentity", "GuardStore", "GuardSessions", "TimeLimits", "SystemKit", "CSDBus"]
        ),
        // the policy: requests, decisions, updates and the administrator's verbs;
        .target(
            name: "GuardPolicy",
            dependencies: ["GuardIdentity", "GuardStore", "GuardFlatpak", "AuthorizationRules", "FamilyConfiguration",
                           "FamilyControlsModel", "GuardProtocol", "LockEngine", "PAM", "SystemKit", "UpdateSignature",
                           "CSDJournal"]
        ),
        // the time limits approved apps set for their children, and more time from a guardian;
        .target(
            name: "GuardTimeLimits",
            dependencies: ["GuardPolicy", "GuardIdentity", "GuardStore", "FamilyConfiguration", "GuardProtocol",
                           "SystemKit", "TimeLimits"]
        ),
        // the checks of a site's set-up: who can become root or a guardian, and the configuration;
        .target(
            name: "GuardDiagnostics",
            dependencies: ["GuardIdentity", "FamilyConfiguration", "PAM", "SystemKit"]
        ),
        // and the daemon: the server's method table, its connections, start-up and reload.
        .target(
            name: "GuardKit",
            dependencies: ["GuardIdentity", "GuardStore", "GuardFlatpak", "GuardSessions", "GuardTime", "GuardPolicy",
                           "GuardTimeLimits", "GuardDiagnostics", "TimeLimits", "FamilyConfiguration", "FamilyControlsModel",
                           "GuardProtocol", "PAM",
                           "SystemKit", "Varlink", "VarlinkServerKit"],
            plugins: ["EmbedInterface"]
        ),
        // Build-time only: the Guard's Varlink interface, embedded from Config/,
        // and the types generated from it.
        .executableTarget(name: "embed-text", path: "Plugins/embed-text"),
        .executableTarget(name: "generate-protocol", path: "Plugins/generate-protocol"),
        .plugin(name: "EmbedInterface", capability: .buildTool(), dependencies: ["embed-text", "generate-protocol"]),
        // The administrator's command: the Guard over Varlink, and PAM only for
        // `familyctl authenticate`, which checks a site's PAM stack by itself.
        // Not sd-bus nor libqrencode: the verbs that need them run in a program
        // of their own (familycontrols-agent, below), so every other starts without them.
        .target(
            name: "FamilyCtl",
            dependencies: ["Varlink", "VarlinkClientKit", "GuardProtocol", "PAM", "FamilyConfiguration", "SystemKit",
                           "FamilyControlsModel", "TimeLimits"]
        ),
        // The desktop's notification server (sd-bus) for `familyctl agent`, and
        // the QR code `familyctl code enroll` draws (libqrencode).
        .target(name: "FamilyCtlDesktop", dependencies: ["FamilyCtl", "CSDBus", "CQRencode", "SystemKit"]),
        // The part of Combine apps use (publishers, `@Published`, `sink`,
        // `ObservableObject`); FamilyControls re-exports it, so apps import one module.
        .target(name: "FamilyControlsCombine"),
        .target(
            name: "FamilyControls",
            dependencies: ["FamilyControlsModel", "FamilyControlsCombine", "SystemKit", "Varlink", "VarlinkClientKit",
                           "GuardProtocol"]
        ),
        .target(name: "FamilyControlsTesting", dependencies: ["FamilyControls", "AuthorizationRules", "TimeLimits"]),

        // Thin executables.
        .executableTarget(name: "familycontrolsd", dependencies: ["GuardKit"]),
        .executableTarget(name: "familyctl", dependencies: ["FamilyCtl"]),
        // `familyctl agent` and `familyctl code enroll`, which familyctl becomes.
        .executableTarget(name: "familycontrols-agent", dependencies: ["FamilyCtl", "FamilyCtlDesktop"]),
        .executableTarget(name: "familycontrols-demo", dependencies: ["FamilyControls"]),
        // The inspector the Guard starts for one call: reads what a child or a
        // remote wrote, unprivileged and filtered, and answers typed.
        // The inspector's answers, call to reply: run by familycontrols-inspect,
        // and by the bench to measure the same reading without a process.
        .target(name: "InspectorService", dependencies: ["ChildInspection", "GuardProtocol", "Varlink"]),
        .executableTarget(name: "familycontrols-inspect", dependencies: ["InspectorService", "SystemKit"]),
        // For app developers: a key pair, and the signature of a version of their app.
        .executableTarget(name: "familycontrols-sign", dependencies: ["UpdateSignature", "SystemKit"]),
        .executableTarget(
            name: "familycontrols-bench",
            dependencies: ["GuardKit", "GuardIdentity", "GuardStore", "GuardPolicy", "GuardProtocol", "LockEngine", "Varlink",
                           "VarlinkClientKit", "VarlinkServerKit",
                           "SystemKit", "FamilyControlsModel", "InspectorService"]
        ),

        // Tests: one target per library, plus end-to-end tests of real processes.
        .target(name: "TestSupport", dependencies: ["SystemKit"], path: "Tests/TestSupport"),
        .testTarget(name: "CPAMTests", dependencies: ["CPAM"]),
        .testTarget(name: "PAMSessionModuleWireTests", dependencies: ["pam_familycontrols", "TestSupport"]),
        .testTarget(name: "ChildInspectionTests", dependencies: ["ChildInspection", "FlatpakNames", "TestSupport"]),
        .testTarget(name: "ArchitectureTests", dependencies: ["TestSupport"]),
        .testTarget(name: "SystemKitTests", dependencies: ["SystemKit", "TestSupport"]),
        .testTarget(name: "VarlinkTests", dependencies: ["Varlink", "VarlinkClientKit", "VarlinkServerKit"]),
        .testTarget(name: "AuthorizationRulesTests", dependencies: ["AuthorizationRules", "GuardProtocol", "FamilyControlsModel"]),
        .testTarget(name: "GuardProtocolTests", dependencies: ["GuardProtocol", "Varlink", "SystemKit"]),
        .testTarget(name: "FamilyControlsTests", dependencies: ["FamilyControls", "FamilyControlsTesting", "TestSupport"]),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite", "TestSupport"]),
        .testTarget(name: "PAMTests", dependencies: ["PAM", "GuardProtocol", "SystemKit", "TestSupport"]),
        .testTarget(name: "LockEngineTests", dependencies: ["LockEngine", "TestSupport"]),
        .testTarget(name: "FamilyConfigurationTests", dependencies: ["FamilyConfiguration", "TestSupport"]),
        .testTarget(name: "TimeLimitsTests", dependencies: ["TimeLimits"]),
        .testTarget(
            name: "GuardTimeTests",
            dependencies: ["GuardTime", "GuardSessions", "GuardStore", "GuardIdentity", "TimeLimits", "SystemKit", "TestSupport"]
        ),
        .testTarget(name: "UpdateSignatureTests", dependencies: ["UpdateSignature", "SystemKit", "TestSupport"]),
        .testTarget(
            name: "GuardKitTests",
            dependencies: ["GuardKit", "GuardIdentity", "GuardStore", "GuardFlatpak", "GuardSessions", "GuardPolicy", "GuardTimeLimits", "TimeLimits", "GuardDiagnostics", "SQLite", "LockEngine", "FamilyConfiguration", "UpdateSignature", "Varlink",
                           "VarlinkClientKit", "VarlinkServerKit", "TestSupport"]
        ),
        // Reads logind's sessions with the real libsystemd, run by GuardKitTests
        // in a mount namespace of its own over logind state files they write.
        .executableTarget(name: "logind-probe", dependencies: ["GuardSessions"], path: "Tests/LogindProbe"),
        // One Flatpak move or judgement of GuardKit's as a command line, run as root by FlatpakMoveTests.
        .executableTarget(name: "flatpak-move-probe", dependencies: ["GuardFlatpak", "GuardIdentity", "FamilyConfiguration", "SystemKit"],
                          path: "Tests/FlatpakMoveProbe"),
        .testTarget(name: "FamilyCtlTests", dependencies: ["FamilyCtl", "FamilyCtlDesktop", "GuardProtocol", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["SystemKit", "Varlink", "VarlinkClientKit", "TestSupport"]),

        // An app's code in the idioms real apps use, beside the library: a
        // sample view model and its tests with the in-memory Guard. The
        // idioms in Tests/AppIdioms/Idioms are typechecked in Swift 5 and 6
        // modes by FamilyControlsTests (AppIdiomTests).
        .target(name: "SampleApp", dependencies: ["FamilyControls"], path: "Tests/AppIdioms/SampleApp"),
        .testTarget(
            name: "SampleAppTests",
            dependencies: ["SampleApp", "FamilyControls", "FamilyControlsTesting"],
            path: "Tests/AppIdioms/SampleAppTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
