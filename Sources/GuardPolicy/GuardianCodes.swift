#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import Synchronization
import SystemKit

/// The guardians' one-time-code secrets (`familyctl code enroll`), kept in
/// the users file pam_oath reads (`GuardianCodeFile=`), one line per guardian:
///
/// ```
/// HOTP/T30/6  bob  -  HEXSECRET
/// ```
///
/// TOTP (RFC 6238): HMAC-SHA-1, 30-second steps, 6 digits, what authenticator
/// apps expect. pam_oath rewrites the file itself after each code it accepts
/// (the last code used and when, which is how it refuses a replayed one), so
/// every change here is made under the lock liboath takes (`FILE.lock`,
/// created only where there is none, then `fcntl`; a lock file left behind
/// makes pam_oath refuse every code) and lands in one `rename`. Lines of other guardians, comments and
/// what pam_oath added to them are kept as they are.
///
/// The secret is in this file and in the one reply that enrols it; never in
/// a log, an audit row or the store.
final class GuardianCodes: Sendable {
    /// The most the file may hold: a line per guardian is some 80 bytes.
    static let maximumFileSize = 1 << 20
    /// Bytes of a secret: 160 bits, the HMAC-SHA-1 key size RFC 4226 recommends.
    static let secretLength = 20

    /// One change at a time within the Guard; the file lock orders it with pam_oath.
    private let changing = Mutex(())

    /// The guardians with a code in `file`. A file that is missing holds
    /// none; one that cannot be read is reported as the error.
    func enrolled(in file: String) throws(GuardFailure) -> Set<String> {
        var users = Set<String>()
        for line in try lines(of: file) {
            if let user = Self.user(of: line) { users.insert(user) }
        }
        return users
    }

    /// Makes a new secret for `user`, replacing theirs if they had one.
    /// - Returns: the secret's 20 bytes, for the reply that shows it once.
    /// - Throws: `Unavailable` when the file or its folder cannot be written.
    func enroll(_ user: String, in file: String) throws(GuardFailure) -> SecretBytes {
        let secret: SecretBytes
        do throws(Errno) {
            secret = try SecretBytes.random(count: Self.secretLength)
        } catch {
            throw GuardFailure(.unavailable, "no random bytes for a new secret: \(error)")
        }
        var line = Array("HOTP/T30/6\t\(user)\t-\t".utf8)
        secret.withUnsafeBytes { bytes in
            for byte in bytes {
                line.append(Self.hexDigits[Int(byte >> 4)])
                line.append(Self.hexDigits[Int(byte & 0x0f)])
            }
        }
        line.append(UInt8(ascii: "\n"))
        defer { line.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        try change(file) { kept in
            kept.removeAll { Self.user(of: $0) == user }
            kept.append(line)
        }
        return secret
    }

    /// Removes `user`'s secret. - Returns: whether they had one.
    func remove(_ user: String, in file: String) throws(GuardFailure) -> Bool {
        var removed = false
        try change(file) { kept in
            let before = kept.count
            kept.removeAll { Self.user(of: $0) == user }
            removed = kept.count != before
        }
        return removed
    }

    // MARK: The file

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The user a line is for (its second field), nil for a comment or a blank line.
    static func user<Line: Collection<UInt8>>(of line: Line) -> String? {
        let fields = line.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t")
                                                  || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") })
        guard fields.count >= 2, fields[0].first != UInt8(ascii: "#") else { return nil }
        return String(decoding: fields[1], as: UTF8.self)
    }

    /// The file's lines, each with its newline; none for a missing file.
    private func lines(of file: String) throws(GuardFailure) -> [[UInt8]] {
        var bytes: [UInt8]
        do throws(Errno) {
            bytes = try FileDescriptor.open(file, O_RDONLY | O_NOFOLLOW).readAll(limit: Self.maximumFileSize + 1)
        } catch where error.rawValue == ENOENT {
            return []
        } catch {
            throw GuardFailure(.unavailable, "the one-time code file \(file) cannot be read: \(error)")
        }
        defer { bytes.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        guard bytes.count <= Self.maximumFileSize else {
            throw GuardFailure(.unavailable, "the one-time code file \(file) is larger than 1 MiB")
        }
        var lines: [[UInt8]] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            lines.append(Array(bytes[start...index]))
            start = index + 1
        }
        if start < bytes.count { lines.append(Array(bytes[start...]) + [UInt8(ascii: "\n")]) }
        return lines
    }

    /// Reads the file's lines under liboath's lock, lets `edit` change them,
    /// and puts them back in one rename, root's alone (0600).
    private func change(_ file: String, _ edit: (inout [[UInt8]]) -> Void) throws(GuardFailure) {
        try changing.withLock { _ throws(GuardFailure) in
            try makeFolder(of: file)
            let lockPath = file + ".lock"
            let lock = try takeLock(lockPath, of: file)
            defer {
                _ = unlink(lockPath)
                lock.close()
            }
            var lines = try lines(of: file)
            edit(&lines)
            var text = Array(lines.joined())
            defer {
                text.withUnsafeMutableBytes { SecretBytes.zero($0) }
                for index in lines.indices { lines[index].withUnsafeMutableBytes { SecretBytes.zero($0) } }
            }
            do throws(Errno) {
                try FileDescriptor.replaceFile(file, with: text, mode: 0o600, temporarySuffix: ".familycontrols")
            } catch {
                throw GuardFailure(.unavailable, "the one-time code file \(file) cannot be written: \(error)")
            }
        }
    }

    /// liboath's lock: `FILE.lock`, which it creates only if it is not there
    /// (and refuses to update the file while it is), then locks with
    /// `fcntl`, and removes after its rename. Waited for while another holds it.
    private func takeLock(_ lockPath: String, of file: String) throws(GuardFailure) -> FileDescriptor {
        let deadline = MonotonicInstant.now.advanced(by: Self.lockWait)
        while true {
            do throws(Errno) {
                let lock = try FileDescriptor.open(lockPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
                try lock.lockForWriting()
                return lock
            } catch where error.rawValue == EEXIST && MonotonicInstant.now < deadline {
                usleep(20_000)
            } catch where error.rawValue == EEXIST {
                throw GuardFailure(.unavailable, "the one-time code file \(file) stayed locked for \(Self.lockWait) "
                    + "(\(lockPath) is there; remove it if no authentication is under way)")
            } catch {
                throw GuardFailure(.unavailable, "the one-time code file \(file) cannot be locked: \(error)")
            }
        }
    }

    /// How long a change waits for pam_oath to finish its own.
    static let lockWait: Duration = .seconds(2)

    /// The file's folder, made root's alone (0700) when missing. Under the
    /// shipped unit /etc is read-only but for that folder, which the
    /// installation makes; a missing one is named in the error.
    private func makeFolder(of file: String) throws(GuardFailure) {
        guard let slash = file.utf8.lastIndex(of: UInt8(ascii: "/")) else { return }
        let folder = String(file[..<slash])
        guard !folder.isEmpty, mkdir(folder, 0o700) != 0 else { return }
        let code = errno
        guard code != EEXIST else { return }
        throw GuardFailure(.unavailable, "the folder \(folder) for one-time codes is missing and cannot be made: "
            + "\(Errno(code)); create it with mkdir -m 0700 \(folder)")
    }
}

/// RFC 4648 base32, upper case, without padding: how an `otpauth://` URI
/// and authenticator apps write a secret.
enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// `secret` in base32, as bytes that can be zeroed.
    static func encode(_ secret: SecretBytes) -> SecretBytes {
        var text: [UInt8] = []
        secret.withUnsafeBytes { bytes in
            var buffer: UInt32 = 0
            var bits = 0
            for byte in bytes {
                buffer = (buffer << 8) | UInt32(byte)
                bits += 8
                while bits >= 5 {
                    text.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 0x1f)])
                    bits -= 5
                }
            }
            if bits > 0 { text.append(alphabet[Int((buffer << UInt32(5 - bits)) & 0x1f)]) }
            buffer = 0
        }
        return SecretBytes(consuming: &text)
    }
}
