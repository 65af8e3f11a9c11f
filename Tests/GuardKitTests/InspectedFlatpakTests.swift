#if canImport(Glibc)
import Glibc
#endif
@testable import GuardKit
import SystemKit
import Testing
@testable import GuardFlatpak

/// What the Guard takes from the inspector for a Flatpak installation's
/// files: a keyring's trusted keys cut from the Guard's own bytes, a
/// repository's remotes, each checked again. The real inspector, as nobody.
@Suite(.enabled(if: getuid() == 0, "starting the inspector as another user needs root"))
struct InspectedFlatpakTests {
    /// A v4 public-key packet (new format, tag 6) of `body`, then a user ID packet.
    private func key(_ body: [UInt8]) -> [UInt8] {
        [0xC6, UInt8(body.count)] + body + [0xCD, 3] + Array("abc".utf8)
    }

    @Test func aKeyringKeepsOnlyTheKeysWhoseFingerprintIsTrusted() throws {
        let first = key([4, 1, 2, 3, 4, 1, 0, 8, 0xAA])
        let second = key([4, 5, 6, 7, 8, 1, 0, 8, 0xBB])
        let keyring = try OpenPGPKeyring(inspecting: first + second + [0xCC, 1, 0])   // a trust packet, dropped
        #expect(keyring.keys.count == 2)
        let fingerprints = keyring.fingerprints
        #expect(fingerprints.count == 2 && fingerprints.allSatisfy { $0.utf8.count == 40 })
        #expect(keyring.keeping([fingerprints[1]]) == second)
        #expect(keyring.keeping([]) == [])
        #expect(throws: FlatpakMoveError.remoteRefused("the keyring is not OpenPGP packets")) {
            try OpenPGPKeyring(inspecting: [0x00])
        }
    }

    @Test func aRepositorysRemoteIsReadStrictlyAndItsNamesInOrder() throws {
        let config = Array("""
            [core]
            repo_version=1
            [remote "flathub"]
            url=https://dl.flathub.org/repo/
            gpg-verify=true
            [remote "vendor"]
            url=file:///srv/repo
            gpg-verify=false
            collection-id=org.example.Vendor
            """.utf8)
        #expect(try FlatpakRemoteConfiguration.remoteNames(in: config) == ["flathub", "vendor"])
        let vendor = try FlatpakRemoteConfiguration.remote("vendor", in: config)
        #expect(vendor == FlatpakRemoteConfiguration(name: "vendor", url: "file:///srv/repo", gpgVerify: false,
                                                     collectionID: "org.example.Vendor"))
        #expect(throws: FlatpakMoveError.remoteRefused("line 3: url given twice in the remote's group")) {
            try FlatpakRemoteConfiguration.remote("a", in: Array("[remote \"a\"]\nurl=https://x/\nurl=https://y/\n".utf8))
        }
        // The inspector's own refusal of a remote named as an option never starts it.
        #expect(throws: FlatpakMoveError.remoteRefused("the remote's name is not a plain name")) {
            try FlatpakRemoteConfiguration.remote("--if-not-exists", in: config)
        }
    }
}
