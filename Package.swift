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
    ],
    targets: [
        // C: the system libraries, and the one small shim that must be C.
        .systemLibrary(
            name: "CLibPAM",
            providers: [.apt(["libpam0g-dev"])]
        ),
        .target(
            name: "CPAM",
            dependencies: ["CLibPAM"],
            linkerSettings: [.linkedLibrary("pam")]
        ),
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The Linux calls the Glibc module leaves out or declares badly.
        .target(name: "CSystem"),

        // Swift libraries: all the logic lives here, where tests reach it.
        .target(name: "SystemKit", dependencies: ["CSystem"]),
        .target(name: "Varlink", dependencies: ["SystemKit"]),
        // The public value types, without Foundation, so the Guard can share them
        // without loading Foundation; FamilyControls re-exports them.
        .target(name: "FamilyControlsModel"),
        .target(name: "FamilyControls", dependencies: ["FamilyControlsModel", "SystemKit", "Varlink"]),
        .target(name: "FamilyControlsTesting", dependencies: ["FamilyControls"]),
        .target(
            name: "GuardKit",
            dependencies: ["CPAM", "CSQLite", "SystemKit", "Varlink", "FamilyControlsModel"]
        ),

        // Thin executables.
        .executableTarget(name: "familycontrolsd", dependencies: ["GuardKit"]),
        .executableTarget(name: "familyctl", dependencies: ["GuardKit"]),
        .executableTarget(name: "familycontrols-demo", dependencies: ["FamilyControls"]),
        .executableTarget(
            name: "familycontrols-bench",
            dependencies: ["GuardKit", "Varlink", "SystemKit"]
        ),

        // Tests: one target per library, plus end-to-end tests of real processes.
        .target(name: "TestSupport", dependencies: ["SystemKit"], path: "Tests/TestSupport"),
        .testTarget(name: "CPAMTests", dependencies: ["CPAM"]),
        .testTarget(name: "SystemKitTests", dependencies: ["SystemKit"]),
        .testTarget(name: "VarlinkTests", dependencies: ["Varlink"]),
        .testTarget(name: "FamilyControlsTests", dependencies: ["FamilyControls", "FamilyControlsTesting", "TestSupport"]),
        .testTarget(name: "GuardKitTests", dependencies: ["GuardKit", "CPAM", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["SystemKit", "Varlink", "TestSupport"]),

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
