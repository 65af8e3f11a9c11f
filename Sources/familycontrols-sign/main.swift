// familycontrols-sign: for an app's developer, the key that signs the app's
// updates, and the signature of one version of the app.
#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import UpdateSignature

let usage = """
    usage: familycontrols-sign keygen SECRET-KEY-FILE
           familycontrols-sign sign-update SECRET-KEY-FILE VERSION-FOLDER
           familycontrols-sign verify DESKTOP-KEY VERSION-FOLDER

    keygen       write a new Ed25519 secret key (mode 0600, never ship it) and
                 print the line to add to the app's desktop entry
    sign-update  write VERSION-FOLDER/\(UpdateManifest.signatureFileName), the
                 signature of every file of that version of the app
    verify       check VERSION-FOLDER's signature against DESKTOP-KEY, the
                 value of \(UpdateKey.desktopEntryKey)= (ed25519:BASE64)
    """

func fail(_ message: String, code: Int32 = 1) -> Never {
    writeToStandardError("familycontrols-sign: \(message)\n")
    exit(code)
}

func openFolder(_ path: String) -> FileDescriptor {
    do { return try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
        fail("\(path) cannot be opened as a folder (not through a symbolic link): \(error)")
    }
}

func readKey(_ path: String) -> UpdateSigningKey {
    do { return try UpdateSigningKey(fileText: try FileDescriptor.readFile(path, limit: 4096)) } catch let error as Errno {
        fail("\(path) cannot be read: \(error)")
    } catch {
        fail("\(path): \(error)")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "keygen" where arguments.count == 2:
    do {
        let key = try UpdateSigningKey.generate()
        let file = try FileDescriptor.open(arguments[1], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        try file.writeAll(key.fileText)
        print("\(UpdateKey.desktopEntryKey)=\(key.publicKey.declaration)")
    } catch let error as Errno {
        fail("\(arguments[1]) cannot be written (an existing file is never replaced): \(error)")
    } catch {
        fail("\(error)")
    }
case "sign-update" where arguments.count == 3:
    let key = readKey(arguments[1])
    do { try UpdateSignature.signInPlace(openFolder(arguments[2]), with: key) } catch { fail("\(error)") }
    print("signed \(arguments[2]) for \(UpdateKey.desktopEntryKey)=\(key.publicKey.declaration)")
case "verify" where arguments.count == 3:
    do {
        let manifest = try UpdateSignature.verify(openFolder(arguments[2]), with: UpdateKey(declaration: arguments[1]))
        print("\(arguments[2]): signed, \(manifest.entries.count) entries")
    } catch {
        fail("\(arguments[2]): \(error)")
    }
case "-h", "--help", "help":
    print(usage)
default:
    fail(usage, code: 2)
}
