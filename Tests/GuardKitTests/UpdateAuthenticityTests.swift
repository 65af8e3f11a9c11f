import Foundation
@testable import GuardKit
import SystemKit
import TestSupport
import Testing
import UpdateSignature

/// The approved version of an app and a staged one beside it, as an app
/// root holds them while an update waits: `ROOT/APPID` and a staged folder.
@Suite struct UpdateAuthenticityTests {
    static let appID = "org.example.Updated"

    private func entry(key: UpdateKey?, capability: Bool = true) -> String {
        var text = "[Desktop Entry]\nType=Application\nName=Updated\nExec=app\n"
        if capability { text += "X-FamilyControls=true\n" }
        if let key { text += "\(UpdateKey.desktopEntryKey)=\(key.declaration)\n" }
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

    /// The refusal of the staged version, or nil when it is accepted.
    private func refusal(_ root: String) throws -> UpdateRefusal? {
        let approved = try open("\(root)/approved"), staged = try open("\(root)/staged")
        do {
            _ = try UpdateAuthenticity.verify(appID: Self.appID, approved: approved, staged: staged)
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

    @Test func aVersionMayDeclareANewKeyWhenTheApprovedKeySignedIt() throws {
        try withTemporaryDirectorySync { root in
            let old = try UpdateSigningKey.generate(), new = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: old.publicKey))
            try makeVersion("\(root)/staged", entry: entry(key: new.publicKey))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: old)
            #expect(try refusal(root) == nil)
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

    @Test func anApprovedVersionWithoutAKeyCannotBeUpdatedBySignature() throws {
        try withTemporaryDirectorySync { root in
            let key = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: nil))
            try makeVersion("\(root)/staged", entry: entry(key: key.publicKey))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: key)
            #expect(try refusal(root) == .noUpdateKey(appID: Self.appID))
        }
    }

    @Test func aKeyDeclaredTwiceIsRefused() throws {
        try withTemporaryDirectorySync { root in
            let key = try UpdateSigningKey.generate(), other = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved",
                            entry: entry(key: key.publicKey) + "\(UpdateKey.desktopEntryKey)=\(other.publicKey.declaration)\n")
            try makeVersion("\(root)/staged", entry: entry(key: key.publicKey))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: key)
            #expect(try refusal(root) == .ambiguousUpdateKey(which: "approved", appID: Self.appID))
        }
    }

    @Test func aMalformedApprovedKeyIsRefused() throws {
        try withTemporaryDirectorySync { root in
            let key = try UpdateSigningKey.generate()
            try makeVersion("\(root)/approved", entry: entry(key: nil) + "\(UpdateKey.desktopEntryKey)=ed25519:short\n")
            try makeVersion("\(root)/staged", entry: entry(key: key.publicKey))
            try UpdateSignature.signInPlace(open("\(root)/staged"), with: key)
            guard case .signature(.malformedKey) = try refusal(root) else {
                Issue.record("a malformed key was not refused as one: \(String(describing: try refusal(root)))")
                return
            }
        }
    }

    @Test func theDesktopEntryReadsEveryDeclaredUpdateKey() {
        let entry = DesktopEntry(parsing: "[Desktop Entry]\nX-FamilyControls-UpdateKey= ed25519:AAA= \n"
                                 + "X-FamilyControls-UpdateKey=b\n[Desktop Action x]\nX-FamilyControls-UpdateKey=c\n")
        #expect(entry.updateKeys == ["ed25519:AAA=", "b"])
    }
}
