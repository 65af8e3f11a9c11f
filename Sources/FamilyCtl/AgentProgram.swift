#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// `familycontrols-agent`, the program that runs `familyctl agent`, the
/// only verb that talks to the desktop's session bus (libsystemd, and its
/// libgcrypt, liblzma, libzstd, liblz4, libcap), and `familyctl code
/// enroll`, the only one that draws a QR code (libqrencode). familyctl
/// itself loads none of them, so every other verb starts without them; for
/// those two it becomes this program, same process, same arguments.
enum AgentProgram {
    /// The program's file name.
    static let name = "familycontrols-agent"

    /// The agent installed with the running familyctl: beside it (a build
    /// folder), or in `../libexec/familycontrols/` from it (`/usr/bin` →
    /// `/usr/libexec/familycontrols`), whichever is an executable file; nil
    /// when neither is.
    static func path() -> (found: String?, looked: [String]) {
        let candidates = CompanionProgram.candidates(named: name, fallback: "/usr/bin/familyctl")
        let found = candidates.first { CompanionProgram.regularFile($0) != nil && access($0, X_OK) == 0 }
        return (found, candidates)
    }

    /// Replaces this process with the agent program, given familyctl's own
    /// command line; returns only by throwing.
    static func run() throws(CommandFailure) -> Never {
        let (found, looked) = path()
        guard let program = found else {
            throw CommandFailure(.failure, "the desktop agent is not installed: no \(name) in "
                + looked.joined(separator: " or "))
        }
        let arguments = [program] + CommandLine.arguments.dropFirst()
        var pointers = arguments.map { strdup($0) }
        pointers.append(nil)
        execv(program, pointers)
        let error = errno
        for pointer in pointers { free(pointer) }
        throw CommandFailure(.failure, "cannot run \(program): \(String(cString: strerror(error)))")
    }
}
