#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import SystemKit

// A parent or guardian's one-time code, for approving at the child's screen.
extension FamilyCtl {
    /// `familyctl code enroll [--stdin]` and `familyctl code remove [USER]`.
    /// `enroll` draws a QR code with libqrencode, which familyctl does not
    /// load: without `desktop`, familyctl becomes the program that does.
    static func code(_ tokens: [String], socket: String?, desktop: DesktopLibraries?) throws(CommandFailure) {
        let arguments = try parse(tokens, flags: ["--stdin"])
        let operands = arguments.operands
        switch operands.first {
        case "enroll":
            guard operands.count == 1 else { throw CommandFailure(.usage, "code enroll takes no operands: it enrols your own code") }
            guard let desktop else { try AgentProgram.run() }
            try enrollCode(stdin: arguments.has("--stdin"), socket: socket, drawQRCode: desktop.drawQRCode)
        case "remove":
            guard operands.count <= 2 else { throw CommandFailure(.usage, "code remove takes at most one user name") }
            let user = operands.count == 2 ? operands[1] : nil
            let connection = try GuardConnection(socket: GuardConnection.socketPath(socket))
            let removed = try connection.call(Guard.RemoveCode.self, .init(user: user)).removed
            let whose = user.map { DisplayText.sanitized($0) + "'s" } ?? "your"
            print(removed ? "familyctl: \(whose) one-time code is removed" : "familyctl: \(whose) had no one-time code")
        case nil:
            throw CommandFailure(.usage, "code needs enroll or remove")
        case let other?:
            throw CommandFailure(.usage, "unknown code action \"\(other.clipped)\" (expected enroll or remove)")
        }
    }

    /// Enrols the caller's code after they authenticate, then shows the secret
    /// once: as a QR code of its `otpauth://` URI, the URI, and the key.
    private static func enrollCode(stdin: Bool, socket: String?,
                                   drawQRCode: DesktopLibraries.QRCodeDrawer) throws(CommandFailure) {
        guard geteuid() != 0 else {
            throw CommandFailure(.failure, "root has no one-time code: run familyctl code enroll as the parent or guardian")
        }
        let found: UserAccount?
        do throws(Errno) {
            found = try UserDatabase.user(id: getuid())
        } catch {
            throw CommandFailure(.failure, "your account cannot be read from the user directory: \(error)")
        }
        guard let account = found else { throw CommandFailure(.failure, "uid \(getuid()) has no account in the user directory") }
        let conversation = try authenticationConversation(stdin: stdin)
        let connection = try GuardConnection(socket: GuardConnection.socketPath(socket))
        let reply = try connection.converse(Guard.EnrollCode.self, .init(), through: conversation)
        guard let secret = reply.secret else { throw CommandFailure(.failure, "the Guard enrolled no code") }
        let uri = otpauthURI(secret: secret, user: account.name, host: hostName())
        var shown = "familyctl: a new one-time code for \(DisplayText.sanitized(account.name)); "
            + "any code you had before no longer works.\n"
            + "Scan it with an authenticator app (TOTP: 6 digits, a new code every 30 seconds):\n\n"
        shown += drawQRCode(uri) ?? "(too long for a QR code)\n"
        writeToStandardOutput(shown + "\n")
        // The secret goes out as bytes, never as a String, and is zeroed after.
        var text = Array("or enter this key by hand: ".utf8)
        secret.withUnsafeBytes { bytes in
            for (index, byte) in bytes.enumerated() {
                if index > 0, index % 4 == 0 { text.append(UInt8(ascii: " ")) }
                text.append(byte)
            }
        }
        text += Array("\nor open: ".utf8)
        uri.withUnsafeBytes { text += $0 }
        text += Array("\n\nThis is shown once: the Guard keeps it where only root reads it. A child's app now offers "
            .utf8) + Array("\"a parent or guardian is here\": type your user name and the code your app shows.\n".utf8)
        defer { text.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        do throws(Errno) {
            try FileDescriptor.writeStandardOutput(text)
        } catch {
            throw CommandFailure(.failure, "the code could not be shown: \(error)")
        }
    }

    /// `otpauth://totp/FamilyControls:USER@HOST?secret=…&issuer=FamilyControls`
    /// with the algorithm, digits and period spelled out (the Key URI Format
    /// authenticator apps read), as bytes that can be zeroed.
    static func otpauthURI(secret: SecretBytes, user: String, host: String) -> SecretBytes {
        var bytes = Array("otpauth://totp/FamilyControls:".utf8) + percentEncoded(user + "@" + host) + Array("?secret=".utf8)
        secret.withUnsafeBytes { bytes += $0 }
        bytes += Array("&issuer=FamilyControls&algorithm=SHA1&digits=6&period=30".utf8)
        return SecretBytes(consuming: &bytes)
    }

    /// `text` with everything but RFC 3986's unreserved characters percent-encoded.
    private static func percentEncoded(_ text: String) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            if unreserved { out.append(byte) } else { out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xf)]] }
        }
        return out
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension FileDescriptor {
    /// Writes `bytes` to standard output (through a duplicate of it, which
    /// this value owns and closes).
    static func writeStandardOutput(_ bytes: [UInt8]) throws(Errno) {
        let duplicate = dup(1)
        guard duplicate >= 0 else { throw Errno(errno, operation: "dup") }
        try FileDescriptor(taking: duplicate).writeAll(bytes)
    }
}
