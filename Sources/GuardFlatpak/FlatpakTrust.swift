#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import SystemKit

/// Which Flatpak remotes an approval follows without a guardian: only the
/// administrator's (`[Flatpak] TrustedRemote=`), or where no such line is
/// given, Flathub as the system installation (root's, `/var/lib/flatpak`)
/// has it, with the keys of its keyring there. Nothing read from a child's
/// own configuration is trusted: a child's remote is matched against these
/// by URL, and only these keys are carried into the Guard's installation.
package enum FlatpakTrust {
    /// The system installation whose Flathub is trusted by default.
    package static let systemInstallation = "/var/lib/flatpak"

    /// The remotes trusted under `configuration`.
    package static func remotes(_ configured: [FlatpakTrustedRemote]?,
                                systemInstallation: String = systemInstallation) -> [FlatpakTrustedRemote] {
        if let configured { return configured }
        guard let config = try? readRootFile(systemInstallation, ["repo", "config"], limit: FlatpakRemoteConfiguration.sizeLimit),
              let flathub = try? FlatpakRemoteConfiguration.remote(FlatpakTrustedRemote.flathubName, in: config),
              flathub.gpgVerify,
              FlatpakTrustedRemote(name: flathub.name, url: FlatpakTrustedRemote.flathubURL, fingerprints: []).hasURL(flathub.url),
              let keyring = try? readRootFile(systemInstallation, ["repo", "\(flathub.name).trustedkeys.gpg"], limit: OpenPGPKeyring.sizeLimit),
              let keys = try? OpenPGPKeyring(inspecting: keyring), !keys.fingerprints.isEmpty else { return [] }
        return [FlatpakTrustedRemote(name: flathub.name, url: flathub.url, fingerprints: keys.fingerprints)]
    }

    /// The trusted remote a remote of `url` is, or nil.
    package static func match(url: String, in trusted: [FlatpakTrustedRemote]) -> FlatpakTrustedRemote? {
        trusted.first { $0.hasURL(url) }
    }

    /// A remote as a guardian reads it: its name, URL, the fingerprints of
    /// its keys, and whether this site trusts it.
    package static func describe(remote: String, url: String, fingerprints: [String],
                                 trusted: [FlatpakTrustedRemote]) -> String {
        let keys = fingerprints.isEmpty ? "no signing keys" : "keys " + fingerprints.joined(separator: " ")
        let trust = match(url: url, in: trusted).map { site in
            site.fingerprints.isEmpty || fingerprints.contains(where: site.fingerprints.contains)
                ? "trusted by this site as \(site.name): its newer commits are followed"
                : "this site trusts \(site.name) at that URL with other keys: each new commit needs a guardian"
        } ?? "not a remote this site trusts: each new commit needs a guardian"
        return "remote \(remote) (\(url)), \(keys); \(trust)"
    }

    /// A file below a root-owned folder, each step root's and not a link.
    static func readRootFile(_ folder: String, _ components: [String], limit: Int) throws(Errno) -> [UInt8] {
        var directory = try FileDescriptor.open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        guard try directory.status().uid == 0 else { throw Errno(EPERM, operation: "not root's") }
        for component in components.dropLast() {
            directory = try directory.openChild(FileName(component), flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            guard try directory.status().uid == 0 else { throw Errno(EPERM, operation: "not root's") }
        }
        let file = try directory.openChild(FileName(components.last ?? ""), flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        let status = try file.status()
        guard status.uid == 0, status.type == .regular else { throw Errno(EPERM, operation: "not root's") }
        let bytes = try file.readAll(limit: limit + 1)
        guard bytes.count <= limit else { throw Errno(EFBIG, operation: "read") }
        return bytes
    }
}
