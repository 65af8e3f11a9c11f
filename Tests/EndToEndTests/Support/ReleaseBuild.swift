import Foundation
import TestSupport

/// The programs as they are installed: built by `Config/build.sh` (release,
/// the Swift runtime linked in) once per test run, into `.build/static`, where
/// later runs find them built. The first run takes minutes; later ones, seconds.
enum ReleaseBuild {
    static let products = ["familycontrolsd", "familyctl", "familycontrols-agent", "familycontrols-demo", "familycontrols-inspect"]

    /// The folder holding the release products.
    static func binDirectory() async throws -> String {
        try await offload { try built.get() }
    }

    /// The folder `Config/build.sh` builds in (its `BUILD_DIR`), where it keeps
    /// the start-up order it recorded: two up from the products' folder
    /// (`BUILD_DIR/TRIPLE/release`).
    static func buildFolder(of bin: String) -> String {
        URL(fileURLWithPath: bin).deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// A `.deb` from `Config/build-deb.sh`, built once per test run; gzip at its
    /// fastest instead of xz, which would take minutes for the same contents.
    static func debianPackage() async throws -> String {
        try await offload { try package.get() }
    }

    private static let built: Result<String, FixtureError> = Result {
        let result = try run("\(packageRoot)/Config/build.sh", [])
        guard result.succeeded else {
            throw FixtureError("Config/build.sh failed (\(result.status)):\n\(result.standardError.suffix(4000))")
        }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }.mapError { $0 as? FixtureError ?? FixtureError("\($0)") }

    private static let package: Result<String, FixtureError> = Result {
        _ = try built.get()
        let result = try run("\(packageRoot)/Config/build-deb.sh", ["\(packageRoot)/.build/debian-test"],
                             environment: ["DPKG_DEB_COMPRESSOR_TYPE": "gzip", "DPKG_DEB_COMPRESSOR_LEVEL": "1"])
        guard result.succeeded else {
            throw FixtureError("Config/build-deb.sh failed (\(result.status)):\n\(result.standardError.suffix(4000))")
        }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }.mapError { $0 as? FixtureError ?? FixtureError("\($0)") }
}

/// Runs programs where the Swift toolchain cannot be reached: in a mount
/// namespace of their own (`unshare -m`, private propagation) with an empty
/// tmpfs over the toolchain, and nothing in the environment but PATH.
enum NoToolchain {
    /// The folder hidden: the toolchain the debug build loads its runtime from
    /// (its RUNPATH, `/opt/swift/usr/lib/swift/linux` → `/opt/swift`).
    static let toolchain: String? = {
        guard let dynamic = try? run("/usr/bin/readelf", ["-d", productPath("familyctl")]).standardOutput,
              let line = dynamic.split(separator: "\n").first(where: { $0.contains("(RUNPATH)") || $0.contains("(RPATH)") }),
              let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
        let entries = line[line.index(after: open)..<close].split(separator: ":").map(String.init)
        guard let runtime = entries.first(where: { $0.hasSuffix("/usr/lib/swift/linux") }) else { return nil }
        let root = String(runtime.dropLast("/usr/lib/swift/linux".count))
        // A toolchain installed in /usr itself: hide its Swift libraries, not /usr.
        return root.isEmpty ? "/usr/lib/swift" : root
    }()

    /// Whether the sandbox can be made: root, unshare and readelf, a debug build to find the toolchain from.
    static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/readelf") && toolchain != nil
    }

    /// Runs `script` with `/bin/sh` in the sandbox; `$1`… are `arguments`.
    static func sh(_ script: String, _ arguments: [String] = []) async throws -> ProcessResult {
        guard let toolchain else { throw FixtureError("no toolchain found to hide") }
        let sandbox = """
            mount -t tmpfs -o size=1m,mode=0755 none '\(toolchain)' || exit 90
            exec /usr/bin/env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin /bin/sh -c "$0" sh "$@"
            """
        return try await run("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", sandbox, script] + arguments)
    }
}
