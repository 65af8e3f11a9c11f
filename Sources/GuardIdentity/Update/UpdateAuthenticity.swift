#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import UpdateSignature

/// Whether a staged version of an approved app may replace it without a
/// guardian: it keeps the app ID and the capability, it is signed by a key
/// the *approval* trusts (the one a guardian was shown, or one an
/// administrator configured: never merely the key a desktop entry declares
/// now), it declares a trusted key in turn, and its version is newer than
/// every version the approval has had.
///
/// Both folders are read by descriptor: open each with `O_NOFOLLOW`, and keep
/// the staged one out of the child's reach (locked) while this reads it and
/// until it is swapped in, or what was verified is not what is installed.
package enum UpdateAuthenticity {
    /// The desktop entry's largest accepted size, as the Guard reads it at identification.
    static let desktopEntryLimit = 64 << 10

    /// What an approval trusts to carry its updates without a guardian.
    package struct Trust: Sendable, Equatable {
        /// The key a guardian was shown when approving (or approving an update), if any.
        package var recorded: UpdateKey?
        /// The keys an administrator configured for the app.
        package var configured: [UpdateKey]
        /// The highest version the approval has had.
        package var highestVersion: String?

        package init(recorded: UpdateKey?, configured: [UpdateKey] = [], highestVersion: String?) {
            self.recorded = recorded
            self.configured = configured
            self.highestVersion = highestVersion
        }

        /// Every key that may sign an update in.
        package var keys: [UpdateKey] { (recorded.map { [$0] } ?? []) + configured }
    }

    /// The staged version's manifest, when a key `trust` holds signed it,
    /// it declares a trusted key, and its version is newer than
    /// `trust.highestVersion`.
    /// - Parameters:
    ///   - appID: the app's ID, the approved folder's name.
    ///   - staged: the staged version's folder, locked.
    ///   - entry: its desktop entry, as ``checkKept(appID:staged:)`` read it.
    ///   - trust: what the approval trusts.
    /// - Throws: ``UpdateRefusal``, saying why the update needs a guardian.
    package static func verify(appID: String, staged: FileDescriptor, entry: DesktopEntry, trust: Trust)
        throws(UpdateRefusal) -> UpdateManifest {
        let keys = trust.keys
        guard !keys.isEmpty else { throw .noUpdateKey(appID: appID) }
        let manifest: UpdateManifest
        do { (manifest, _) = try UpdateSignature.verify(staged, withAnyOf: keys) } catch { throw .signature(error) }
        // Signed, yet declaring a key no one trusts: the next updates would
        // follow a key no guardian saw.
        guard let declared = entry.updateKey, keys.contains(declared) else {
            throw .keyChanged(from: trust.recorded, to: entry.updateKey)
        }
        guard UpdateVersion.isNewer(entry.comparableVersion, than: trust.highestVersion) else {
            throw .notNewer(version: entry.comparableVersion ?? entry.version, highest: trust.highestVersion)
        }
        return manifest
    }

    /// Refuses a staged version that no one may let in, a guardian included:
    /// one that drops the capability or changes the app ID.
    /// - Returns: the staged version's desktop entry.
    /// - Throws: ``UpdateRefusal``: ``UpdateRefusal/appIDMissing(appID:)``,
    ///   ``UpdateRefusal/appIDChanged(appID:found:)``, ``UpdateRefusal/capabilityDropped(appID:)``,
    ///   ``UpdateRefusal/ambiguousUpdateKey(which:appID:)``, or an unreadable entry.
    package static func checkKept(appID: String, staged: FileDescriptor) throws(UpdateRefusal) -> DesktopEntry {
        try checkAppID(appID, of: staged)
        guard let stagedEntry = try desktopEntry("\(appID).desktop", in: staged, which: "staged") else {
            throw .appIDMissing(appID: appID)
        }
        guard stagedEntry.declaresFamilyControls else { throw .capabilityDropped(appID: appID) }
        guard stagedEntry.updateKeys.count <= 1 else { throw .ambiguousUpdateKey(which: "staged", appID: appID) }
        return stagedEntry
    }

    /// How an update request names a version: its `X-FamilyControls-Version=`
    /// if its desktop entry gives one, and the first 16 hex digits of its
    /// manifest's BLAKE2b-256 digest; "unreadable: …" when it cannot be walked.
    package static func describe(appID: String, version folder: FileDescriptor) -> String {
        let entry = (try? desktopEntry("\(appID).desktop", in: folder, which: "")) ?? nil
        let digest: String
        do throws(UpdateSignatureError) {
            let bytes = try UpdateManifest.compute(of: folder).digest.prefix(8)
            digest = "manifest " + bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        } catch {
            digest = "manifest unreadable: \(error)"
        }
        guard let version = entry?.version else { return digest }
        return "\(DisplayText.sanitized(version, limit: 64)) (\(digest))"
    }

    /// The comparable `X-FamilyControls-Version=` the version in `folder`
    /// declares; nil for none, more than one, or an unreadable entry.
    package static func declaredVersion(appID: String, of folder: FileDescriptor) -> String? {
        let entry = (try? desktopEntry("\(appID).desktop", in: folder, which: "")) ?? nil
        return entry?.comparableVersion.flatMap { UpdateVersion($0)?.text }
    }

    /// The staged version may bring no desktop entry at its top but the app's own.
    private static func checkAppID(_ appID: String, of staged: FileDescriptor) throws(UpdateRefusal) {
        let entries: [DirectoryEntry]
        do { entries = try staged.readDirectory() } catch {
            throw .desktopEntryUnreadable(which: "staged", path: "\(appID).desktop", "\(error)")
        }
        let own = Array("\(appID).desktop".utf8)
        for entry in entries {
            let name = entry.name.bytes
            if name.count > 8, name.suffix(8).elementsEqual(".desktop".utf8), name != own {
                throw .appIDChanged(appID: appID, found: entry.name.display)
            }
        }
    }

    /// The desktop entry `name` at the top of `folder`: a regular file, not a
    /// link, at most ``desktopEntryLimit`` bytes, read by the inspector; nil
    /// when there is none.
    private static func desktopEntry(_ name: String, in folder: FileDescriptor, which: String)
        throws(UpdateRefusal) -> DesktopEntry? {
        let file: FileDescriptor
        do {
            file = try folder.openChild(FileName(name), flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        } catch {
            if error.rawValue == ENOENT { return nil }
            throw .desktopEntryUnreadable(which: which, path: name, "\(error)")
        }
        defer { file.close() }
        let status: FileStatus
        do {
            status = try file.status()
        } catch {
            throw .desktopEntryUnreadable(which: which, path: name, "\(error)")
        }
        guard status.type == .regular else {
            throw .desktopEntryUnreadable(which: which, path: name, "it is not a regular file")
        }
        guard let size = try? file.byteCount(), size <= desktopEntryLimit else {
            throw .desktopEntryUnreadable(which: which, path: name, "it is larger than \(desktopEntryLimit) bytes")
        }
        do throws(InspectionFailure) {
            return try Inspector.standard.desktopEntry(file)
        } catch {
            throw .desktopEntryUnreadable(which: which, path: name, DisplayText.sanitized("\(error)"))
        }
    }
}
