import Foundation
@testable import GuardKit
import SystemKit
import TestSupport
import Testing
import UpdateSignature
@testable import GuardIdentity

/// The approved version of an app and a staged one beside it, as an app
/// root holds them while an update waits: `ROOT/APPID` and a staged folder.
@Suite struct UpdateAuthenticityTests {
    static let appID = "org.example.Updated"

    private func entry(key: UpdateKey?, capability: Bool = true, version: String? = "2") -> String {
        var text = "[Desktop Entry]\nType=Application\nName=Updated\nExec=app\n"
        if capability { text += "X-FamilyControls=true\n" }
        if let key { text += "\(UpdateKey.desktopEntryKey)=\(key.declaration)\n" }
        if let version { text += "X-FamilyControls-Version=\(version)\n" }
        return text
    }

    private func makeVersion(_ path: String, entry: String, entryName: String = "\(appID).desktop") throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try entry.write(toFile: "\(path)/\(entryName)", atomically: false, encoding: .utf8)
        try "#!/bin/sh\n".write(toFile: "\(path)/app", atomically: false, encoding: .utf8)
    }

    private func open(_ path: String) throws -> FileDescriptor {
        try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
    }

    /// The refusal of the staged version, or nil when it is accepted. The
    /// approval trusts `trusted` (else the key the approved version declares,
    /// as a guardian approving it was shown), and has had version 1.
    private func refusal(_ root: String, trusted: UpdateAuthenticity.Trust? = nil) throws -> UpdateRefusal? {
        let staged = try open("\(root)/staged")
        let approvedText = (try? String(contentsOfFile: "\(root)/approved/\(Self.appID).desktop", encoding: .utf8)) ?? ""
        let trust = try trusted ?? UpdateAuthenticity.Trust(recorded: inspectedEntry(approvedText).updateKey,
                                                        highestVersion: "1")
        do {
            let entry = try UpdateAuthenticity.checkKept(appID: Self.appID, staged: staged)
            _ = try UpdateAuthenticity.verify(appID: Self.appID, staged: staged, entry: entry, trust: trust)
            return nil
        } catch {
            return error
        }
    }

    @Test func aVersionSignedWithTheApprovedKeyIsAccepted() throws {
        try withTemporaryDirectorySync { root in
            let key = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: key.publicKey))
            try makeVersion("\(root)/staged", entry: entry(key: key.publicKey))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: key)
            #expect(try refusal(root) == nil)
        }
    }

    /// The trusted key signs a version declaring another key: the next
    /// updates would follow a key no guardian saw, so a guardian decides.
    @Test func aVersionDeclaringANewKeyNeedsAGuardianEvenWhenTheTrustedKeySignedIt() throws {
        try withTemporaryDirectorySync { root in
            let old = try UpdateSigningKey.generate(), new = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: old.publicKey))
            try makeVersion("\(root)/staged", entry: entry(key: new.publicKey))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: old)
            #expect(try refusal(root) == .keyChanged(from: old.publicKey, to: new.publicKey))
            // Unless the administrator trusts the new key too.
            let trust = UpdateAuthenticity.Trust(recorded: old.publicKey, configured: [new.publicKey], highestVersion: "1")
            #expect(try refusal(root, trusted: trust) == nil)
        }
    }

    /// Whatever key the approved folder declares now, only the approval's trusted key counts.
    @Test func theKeyTheApprovedFolderDeclaresNowIsNotTrusted() throws {
        try withTemporaryDirectorySync { root in
            let shown = try UpdateSigningKey.generate(), childs = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: childs.publicKey))
            try makeVersion("\(root)/staged", entry: entry(key: childs.publicKey))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: childs)
            let trust = UpdateAuthenticity.Trust(recorded: shown.publicKey, highestVersion: "1")
            #expect(try refusal(root, trusted: trust) == .signature(.signatureMismatch))
            #expect(try refusal(root, trusted: .init(recorded: nil, highestVersion: "1")) == .noUpdateKey(appID: Self.appID))
        }
    }

    /// Signed by the trusted key, but not newer than every version the
    /// approval has had, or with no version to compare: a guardian decides.
    @Test(arguments: [("1", "1"), ("0.9", "1"), ("1.0", "1"), ("2-beta", "1"), (nil, "1"), ("2", nil)] as [(String?, String?)])
    func aSignedVersionNotNewerNeedsAGuardian(_ version: String?, _ highest: String?) throws {
        try withTemporaryDirectorySync { root in
            let key = try UpdateSigningKey.generate()
            try makeVersion("\(root)/staged", entry: entry(key: key.publicKey, version: version))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: key)
            let trust = UpdateAuthenticity.Trust(recorded: key.publicKey, highestVersion: highest)
            #expect(try refusal(root, trusted: trust) == .notNewer(version: version, highest: highest))
        }
    }

    /// The staged version brings its own key and signs itself with it: the
    /// key it declares is never the one it is verified with.
    @Test func aVersionSignedWithItsOwnNewKeyIsRefused() throws {
        try withTemporaryDirectorySync { root in
            let approved = try UpdateSigningKey.generate(), own = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: approved.publicKey))
            try makeVersion("\(root)/staged", entry: entry(key: own.publicKey))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: own)
            #expect(try refusal(root) == .signature(.signatureMismatch))
        }
    }

    @Test func aVersionSignedByAnotherKeyIsRefused() throws {
        try withTemporaryDirectorySync { root in
            let approved = try UpdateSigningKey.generate(), other = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: approved.publicKey))
            try makeVersion("\(root)/staged", entry: entry(key: approved.publicKey))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: other)
            #expect(try refusal(root) == .signature(.signatureMismatch))
        }
    }

    @Test func aVersionThatDropsTheCapabilityIsRefusedEvenWhenSigned() throws {
        try withTemporaryDirectorySync { root in
            let key = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: key.publicKey))
            try makeVersion("\(root)/staged", entry: entry(key: key.publicKey, capability: false))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: key)
            #expect(try refusal(root) == .capabilityDropped(appID: Self.appID))
        }
    }

    @Test func aVersionOfAnotherAppIDIsRefusedEvenWhenSigned() throws {
        try withTemporaryDirectorySync { root in
            let key = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: key.publicKey))
            try makeVersion("\(root)/staged", entry: entry(key: key.publicKey), entryName: "org.example.Other.desktop")
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: key)
            #expect(try refusal(root) == .appIDChanged(appID: Self.appID, found: "org.example.Other.desktop"))
            try FileManager.default.removeItem(atPath: "\(root)/staged/org.example.Other.desktop")
            #expect(try refusal(root) == .appIDMissing(appID: Self.appID))
        }
    }

    @Test func anApprovalWithoutAKeyCannotBeUpdatedBySignature() throws {
        try withTemporaryDirectorySync { root in
            let key = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: nil))
            try makeVersion("\(root)/staged", entry: entry(key: key.publicKey))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: key)
            #expect(try refusal(root) == .noUpdateKey(appID: Self.appID))
        }
    }

    @Test func aStagedKeyDeclaredTwiceIsRefused() throws {
        try withTemporaryDirectorySync { root in
            let key = try UpdateSigningKey.generate(), other = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: key.publicKey))
            try makeVersion("\(root)/staged",
                            entry: entry(key: key.publicKey) + "\(UpdateKey.desktopEntryKey)=\(other.publicKey.declaration)\n")
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: key)
            #expect(try refusal(root) == .ambiguousUpdateKey(which: "staged", appID: Self.appID))
        }
    }

    @Test func aMalformedDeclaredKeyIsNoKey() throws {
        let entry = try inspectedEntry("[Desktop Entry]\n\(UpdateKey.desktopEntryKey)=ed25519:short\n")
        #expect(entry.updateKeys == ["ed25519:short"])
        #expect(entry.updateKey == nil)
    }

    @Test func theDesktopEntryReadsEveryDeclaredUpdateKey() throws {
        let entry = try inspectedEntry("[Desktop Entry]\nX-FamilyControls-UpdateKey= ed25519:AAA= \n"
                                 + "X-FamilyControls-UpdateKey=b\n[Desktop Action x]\nX-FamilyControls-UpdateKey=c\n")
        #expect(entry.updateKeys == ["ed25519:AAA=", "b"])
    }
}
