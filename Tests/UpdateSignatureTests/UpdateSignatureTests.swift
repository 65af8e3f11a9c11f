import Foundation
import SystemKit
import TestSupport
import Testing
import UpdateSignature

@Suite struct UpdateSignatureTests {
    @Test func aSignedVersionVerifiesWithItsKey() throws {
        try withVersionFolder { version, _ in
            let key = try UpdateSigningKey.generate()
            try version.sign(with: key)
            let manifest = try UpdateSignature.verify(version.open(), with: key.publicKey)
            let paths = manifest.entries.map { String(decoding: $0.path, as: UTF8.self) }
            #expect(paths == ["bin", "bin/app", "bin/run", "empty", "share", "share/data.txt"])
            #expect(manifest.entries[2].kind == .symbolicLink(target: Array("app".utf8)))
            #expect(manifest.entries[1].permissions == 0o755)
        }
    }

    /// What a changed version may have had done to it after it was signed.
    enum Tampering: String, CaseIterable, CustomTestStringConvertible {
        case oneByteChanged, fileAdded, fileRemoved, fileRenamed, modeChanged, linkSwappedForFile,
             folderAdded, linkRetargeted
        var testDescription: String { rawValue }

        func apply(to version: VersionFolder) throws {
            let manager = FileManager.default
            let path = version.path
            switch self {
            case .oneByteChanged: try version.write("data of the apq\n", to: "share/data.txt")
            case .fileAdded: try version.write("more\n", to: "share/extra.txt")
            case .fileRemoved: try manager.removeItem(atPath: "\(path)/share/data.txt")
            case .fileRenamed: try manager.moveItem(atPath: "\(path)/share/data.txt", toPath: "\(path)/share/data.text")
            case .modeChanged: try manager.setAttributes([.posixPermissions: 0o4755], ofItemAtPath: "\(path)/bin/app")
            case .linkSwappedForFile:
                let program = try Data(contentsOf: URL(fileURLWithPath: "\(path)/bin/app"))
                try manager.removeItem(atPath: "\(path)/bin/run")
                try program.write(to: URL(fileURLWithPath: "\(path)/bin/run"))
            case .folderAdded: try manager.createDirectory(atPath: "\(path)/empty/more", withIntermediateDirectories: false)
            case .linkRetargeted:
                try manager.removeItem(atPath: "\(path)/bin/run")
                try manager.createSymbolicLink(atPath: "\(path)/bin/run", withDestinationPath: "/bin/sh")
            }
        }
    }

    @Test(arguments: Tampering.allCases)
    func aVersionChangedAfterSigningIsRefused(_ tampering: Tampering) throws {
        try withVersionFolder { version, _ in
            let key = try UpdateSigningKey.generate()
            try version.sign(with: key)
            #expect(try version.refusal(with: key.publicKey) == nil)
            try tampering.apply(to: version)
            #expect(try version.refusal(with: key.publicKey) == .signatureMismatch)
        }
    }

    @Test func aSignatureByAnotherKeyIsRefused() throws {
        try withVersionFolder { version, _ in
            let signer = try UpdateSigningKey.generate(), approved = try UpdateSigningKey.generate()
            try version.sign(with: signer)
            #expect(try version.refusal(with: approved.publicKey) == .signatureMismatch)
        }
    }

    @Test func aVersionWithoutASignatureIsRefused() throws {
        try withVersionFolder { version, _ in
            let key = try UpdateSigningKey.generate()
            #expect(try version.refusal(with: key.publicKey) == .missingSignature)
        }
    }

    @Test func aSignatureFileOfTheWrongSizeIsRefused() throws {
        try withVersionFolder { version, _ in
            try version.write("not a signature", to: UpdateManifest.signatureFileName)
            let key = try UpdateSigningKey.generate()
            #expect(try version.refusal(with: key.publicKey) == .malformedSignature(size: 15))
        }
    }

    @Test func aSignatureFileThatIsALinkIsRefused() throws {
        try withVersionFolder { version, parent in
            let key = try UpdateSigningKey.generate()
            try version.sign(with: key)
            let signature = "\(version.path)/\(UpdateManifest.signatureFileName)"
            try FileManager.default.moveItem(atPath: signature, toPath: "\(parent)/signature")
            try FileManager.default.createSymbolicLink(atPath: signature, withDestinationPath: "\(parent)/signature")
            #expect(try version.refusal(with: key.publicKey) == .missingSignature)
        }
    }

    @Test func aSpecialFileIsRefused() throws {
        try withVersionFolder { version, _ in
            #expect(mkfifo("\(version.path)/share/pipe", 0o644) == 0)
            #expect(throws: UpdateSignatureError.specialFile(path: "share/pipe")) {
                try UpdateManifest.compute(of: try version.open())
            }
        }
    }

    @Test func aHardLinkIsRefused() throws {
        try withVersionFolder { version, parent in
            try "outside\n".write(toFile: "\(parent)/outside", atomically: false, encoding: .utf8)
            #expect(link("\(parent)/outside", "\(version.path)/share/linked") == 0)
            #expect(throws: UpdateSignatureError.hardLink(path: "share/linked")) {
                try UpdateManifest.compute(of: try version.open())
            }
        }
    }

    @Test(arguments: ["new\nline", "tab\there", "escape\u{1B}[31m", "delete\u{7F}"])
    func aNameWithAControlCharacterIsRefused(_ name: String) throws {
        try withVersionFolder { version, _ in
            try version.write("x", to: "share/\(name)")
            #expect(throws: UpdateSignatureError.controlCharacter(path: DisplayText.sanitized("share/\(name)"))) {
                try UpdateManifest.compute(of: try version.open())
            }
        }
    }

    @Test func aLinkTargetWithAControlCharacterIsRefused() throws {
        try withVersionFolder { version, _ in
            try FileManager.default.createSymbolicLink(atPath: "\(version.path)/share/odd", withDestinationPath: "a\nb")
            #expect(throws: UpdateSignatureError.controlCharacter(path: "share/odd")) {
                try UpdateManifest.compute(of: try version.open())
            }
        }
    }

    @Test func foldersNestedTooDeepAreRefused() throws {
        try withVersionFolder { version, _ in
            try FileManager.default.createDirectory(atPath: "\(version.path)/a/b/c", withIntermediateDirectories: true)
            #expect(throws: UpdateSignatureError.tooDeep(path: "a/b/c", limit: 2)) {
                try UpdateManifest.compute(of: try version.open(), limits: .init(maximumDepth: 2))
            }
            #expect(throws: UpdateSignatureError.tooManyEntries(limit: 3)) {
                try UpdateManifest.compute(of: try version.open(), limits: .init(maximumEntries: 3))
            }
        }
    }

    /// Files holding more bytes together than the bound: the walk stops
    /// reading there, so a huge (or sparse) file costs bounded time.
    @Test func filesTooLargeTogetherAreRefused() throws {
        try withVersionFolder { version, _ in
            try Data(repeating: 7, count: 600).write(to: URL(fileURLWithPath: "\(version.path)/big"))
            #expect(throws: UpdateSignatureError.tooLarge(limit: 512)) {
                try UpdateManifest.compute(of: try version.open(), limits: .init(maximumBytes: 512))
            }
            #expect(throws: Never.self) {
                try UpdateManifest.compute(of: try version.open(), limits: .init(maximumBytes: 1 << 20))
            }
        }
    }

    /// A folder of the signed version replaced by a link to a copy of it
    /// elsewhere: the walk records the link and never follows it, so the
    /// version no longer verifies even though every byte reached through
    /// the link is the same.
    @Test func aFolderReplacedByALinkToAnIdenticalCopyIsRefused() throws {
        try withVersionFolder { version, parent in
            let key = try UpdateSigningKey.generate()
            try version.sign(with: key)
            try FileManager.default.moveItem(atPath: "\(version.path)/share", toPath: "\(parent)/share")
            try FileManager.default.createSymbolicLink(atPath: "\(version.path)/share", withDestinationPath: "\(parent)/share")
            #expect(try version.refusal(with: key.publicKey) == .signatureMismatch)
            let manifest = try UpdateManifest.compute(of: try version.open())
            #expect(!manifest.entries.contains { $0.path.starts(with: Array("share/".utf8)) })
        }
    }

    /// The child, as a real unprivileged process, keeps swapping a folder of
    /// the staged version with a link to an identical copy outside it while
    /// the version is verified: a verification that succeeds must have read
    /// the signed tree itself, never the copy through the link.
    @Test(.enabled(if: canManageUsers, "needs root to make a throwaway child user"))
    func aChildSwappingAFolderForALinkDuringTheWalkNeverGetsADifferentTreeVerified() throws {
        let user = try makeThrowawayUser(prefix: "s", password: false)
        defer { removeThrowawayUser(user) }
        try withVersionFolder { version, parent in
            let key = try UpdateSigningKey.generate()
            try version.sign(with: key)
            let signed = try UpdateManifest.compute(of: try version.open())
            // The copy outside differs in one byte: a walk that followed the
            // link would hash it, so following would show as a different manifest.
            try FileManager.default.createDirectory(atPath: "\(parent)/copy", withIntermediateDirectories: false)
            try "data of the apq\n".write(toFile: "\(parent)/copy/data.txt", atomically: false, encoding: .utf8)
            _ = try run("/bin/chown", ["-R", "\(user.uid):\(user.gid)", parent])
            _ = try run("/bin/chmod", ["0755", parent])
            let script = """
                cd '\(version.path)' || exit 1
                while :; do mv share share.real; ln -s '\(parent)/copy' share; rm share; mv share.real share; done
                """
            let child = Process()
            child.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            child.arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--inh-caps=-all",
                               "--", "/bin/sh", "-c", script]
            try child.run()
            defer { child.terminate(); child.waitUntilExit() }
            var verified = 0, refused = 0
            for _ in 0..<300 {
                guard let folder = try? version.open() else { continue }
                do {
                    let manifest = try UpdateSignature.verify(folder, with: key.publicKey)
                    #expect(manifest == signed)
                    verified += 1
                } catch {
                    refused += 1
                }
            }
            #expect(child.isRunning, "the racing child stopped early")
            #expect(verified + refused == 300)
            #expect(refused > 0, "the race never hit the walk: \(verified) verified")
        }
    }
}
