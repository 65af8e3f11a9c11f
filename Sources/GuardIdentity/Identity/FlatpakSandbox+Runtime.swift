#if canImport(Glibc)
import Glibc
#endif
import LockEngine
import SystemKit

// Which runtime is an app's own. `flatpak run --runtime=REF` runs an app on
// any runtime its user installed, and then the sandbox's `/usr` (its shell,
// its libraries) is the child's. So a process is the app only on the runtime
// the app's deployment names; and an app in a root-owned installation only
// on a runtime in one too (AppIdentifier+Flatpak): Flatpak prefers a
// per-user runtime of that very ref, whose files the child writes.
extension FlatpakSandbox {
    /// The largest `metadata` file read, as Flatpak's own are a few hundred bytes.
    package static let metadataLimit = 64 << 10

    /// Why `runtime`, the runtime the process runs on, is not `app`'s own;
    /// nil when it is.
    /// - Parameters:
    ///   - runtime: the runtime deployment `.flatpak-info` names, already
    ///     checked to be a deployment of that ref and commit.
    ///   - app: the app's deployment.
    static func runtimeProblem(_ runtime: FlatpakDeployment, of app: FlatpakDeployment) -> String? {
        let used = "\(runtime.appID)/\(runtime.arch)/\(runtime.branch)"
        guard let named = declaredRuntime(of: app) else {
            return "the metadata of \(DisplayText.sanitized(app.path)) names no runtime"
        }
        guard named == used else {
            return "it runs on the runtime \(DisplayText.sanitized(used)), not on \(DisplayText.sanitized(named)), "
                + "the one its deployment names"
        }
        if case .system = app.installation.kind, case .user = runtime.installation.kind {
            return "it runs on the runtime in \(DisplayText.sanitized(runtime.installation.path)), a per-user installation "
                + "its user can change; an app of a root-owned installation is itself only on a runtime of a root-owned one "
                + "(remove the per-user copy: flatpak uninstall --user \(DisplayText.sanitized(runtime.appID)))"
        }
        return nil
    }

    /// `[Application] runtime=` of `app`'s `metadata`, opened without a link
    /// from a folder opened one component at a time; nil when it cannot be read.
    package static func declaredRuntime(of app: FlatpakDeployment) -> String? {
        guard let folder = try? OpenedDirectory.open(app.path), let file = folder.openFile("metadata") else { return nil }
        defer { file.close() }
        guard let status = try? file.status(), status.type == .regular,
              let bytes = try? file.readAll(limit: metadataLimit + 1), bytes.count <= metadataLimit else { return nil }
        return declaredRuntime(inMetadata: bytes)
    }

    /// `[Application] runtime=` of a `metadata` file's bytes, nil when it names none.
    package static func declaredRuntime(inMetadata bytes: [UInt8]) -> String? {
        var group = ""
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("[") {
                group = String(line)
            } else if group == "[Application]", line.hasPrefix("runtime=") {
                return String(line.dropFirst("runtime=".count))
            }
        }
        return nil
    }
}
