import FlatpakNames
import GuardProtocol
import SystemKit

/// What an app's desktop entry says, as the inspector read it.
package typealias DesktopEntry = Inspect.DesktopEntry
/// What a sandbox's `.flatpak-info` says, as the inspector read it.
package typealias FlatpakInfo = Inspect.FlatpakInfo

extension Inspect.DesktopEntry {
    /// The version an update request shows: the first one given.
    package var version: String? { versions.first }
    /// The version updates are compared by: the only one given, else nil
    /// (none, or more than one, is no version to compare).
    package var comparableVersion: String? { versions.count == 1 ? versions.first : nil }
}

extension Inspector {
    /// The desktop entry on `file`.
    package func desktopEntry(_ file: FileDescriptor) throws(InspectionFailure) -> DesktopEntry {
        try call(Inspect.ReadDesktopEntry.self, input: file).entry
    }

    /// The `.flatpak-info` on `file`, each name checked again here by
    /// Flatpak's rules: an answer is only as good as the process that gave it.
    package func flatpakInfo(_ file: FileDescriptor) throws(InspectionFailure) -> FlatpakInfo {
        let info = try call(Inspect.ReadFlatpakInfo.self, input: file).info
        let checks: [(String, Bool)] = [
            ("name", FlatpakNames.isValidAppID(info.appID)),
            ("runtime", info.runtime.map(FlatpakNames.isValidRef) ?? true),
            ("app-path", FlatpakNames.isNormalizedAbsolutePath(info.appPath)),
            ("app-commit", FlatpakNames.isCommit(info.appCommit)),
            ("runtime-path", info.runtimePath.map(FlatpakNames.isNormalizedAbsolutePath) ?? true),
            ("runtime-commit", info.runtimeCommit.map(FlatpakNames.isCommit) ?? true),
            ("instance-id", FlatpakNames.isInstanceID(info.instanceID)),
            ("branch", FlatpakNames.isValidBranch(info.branch)),
            ("arch", FlatpakNames.isValidArch(info.arch)),
            ("flatpak-version", info.flatpakVersion.map(FlatpakNames.isFlatpakVersion) ?? true),
        ]
        if let (key, _) = checks.first(where: { !$0.1 }) {
            throw .failed("the inspector answered a \(key) that is not valid")
        }
        return info
    }

    /// The mappings of `maps` (a `/proc/PID/maps` the Guard opened) that may run code.
    package func executableMappings(_ maps: FileDescriptor) throws(InspectionFailure) -> [Inspect.MemoryMapping] {
        let mappings = try call(Inspect.ReadExecutableMappings.self, input: maps).mappings
        // The range names an entry of map_files: two hexadecimal numbers, nothing else.
        let isHex = { (byte: UInt8) in FlatpakNames.isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) }
        for mapping in mappings {
            let parts = mapping.range.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.count <= 16 && $0.allSatisfy(isHex) }) else {
                throw .failed("the inspector answered a mapping whose range is not two addresses")
            }
        }
        return mappings
    }
}
