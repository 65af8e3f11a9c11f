#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// A pinentry program, the standard passphrase dialog of the guardian's own
/// session (GNOME, Qt, GTK, curses or a bare terminal, whichever Debian's
/// alternatives or `PINENTRY` pick), spoken to in the Assuan protocol on its
/// standard input and output, as gpg-agent does.
///
/// What it answers to `GETPIN` is read into one buffer that is zeroed after
/// every line, and handed on as ``SecretBytes`` only.
///
/// Not thread-safe: one owner, the thread deciding a request.
final class Pinentry {
    /// Why pinentry could not be used, or ended the dialog.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What `GETPIN` came back with.
    enum Answer {
        case pin(SecretBytes)
        /// The person pressed Cancel or closed the dialog.
        case canceled
        case timedOut
    }

    /// The longest line Assuan allows, newline included.
    static let lineLimit = 1000

    private let process: HelperProcess
    private let toProgram: FileDescriptor
    private let fromProgram: FileDescriptor
    private let line: UnsafeMutableRawBufferPointer
    private var lineLength = 0

    /// The program to run: `PINENTRY` (a path, or a name looked up in `PATH`),
    /// else `pinentry` from `PATH`.
    static func program(environment: [String: String]) -> String? {
        let name = environment["PINENTRY"].flatMap { $0.isEmpty ? nil : $0 } ?? "pinentry"
        if name.hasPrefix("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where directory.hasPrefix("/") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Starts `program` with the agent's environment (its `DISPLAY`,
    /// `WAYLAND_DISPLAY` and session bus are the guardian's own), on
    /// `terminal` for the curses and tty flavours, and reads its greeting.
    init(program: String, environment: [String], terminal: String?, term: String?,
         deadline: MonotonicInstant) throws(Failure) {
        let input: (read: FileDescriptor, write: FileDescriptor), output: (read: FileDescriptor, write: FileDescriptor)
        do throws(Errno) {
            input = try FileDescriptor.pipe()
            output = try FileDescriptor.pipe()
        } catch {
            throw Failure(description: "cannot make a pipe for pinentry: \(error)")
        }
        toProgram = input.write
        fromProgram = output.read
        var arguments: [String] = []
        if let terminal { arguments += ["--ttyname", terminal] }
        if let term, !term.isEmpty { arguments += ["--ttytype", term] }
        do throws(Errno) {
            process = try HelperProcess.spawn(program, arguments: arguments, environment: environment,
                                              input: input.read.rawValue, output: output.write.rawValue)
        } catch {
            throw Failure(description: "cannot start \(DisplayText.sanitized(program)): \(error)")
        }
        input.read.close()
        output.write.close()
        line = .allocate(byteCount: Self.lineLimit, alignment: 1)
        _ = try expectOK(deadline: deadline)
    }

    deinit {
        SecretBytes.zero(line)
        line.deallocate()
        toProgram.close()
        fromProgram.close()
        // A pinentry still showing its dialog is ended: its question has no one waiting.
        if (try? process.waitForExit(until: .now.advanced(by: .milliseconds(500)))) == nil { process.kill() }
    }

    /// Sends `SETTITLE`, `SETDESC`, `SETPROMPT`, `SETERROR` or any command
    /// taking one text, percent-escaped, and expects `OK`.
    func set(_ command: String, _ text: String, deadline: MonotonicInstant) throws(Failure) {
        try send(command + " " + Self.escaped(text, limit: Self.lineLimit - command.utf8.count - 2))
        _ = try expectOK(deadline: deadline)
    }

    /// Asks for the passphrase (`GETPIN`).
    func getPin(deadline: MonotonicInstant) throws(Failure) -> Answer {
        try send("GETPIN")
        var pin: [UInt8] = []
        pin.reserveCapacity(Self.lineLimit)
        defer { pin.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        while true {
            guard try readLine(deadline: deadline) else { return .timedOut }
            defer { clearLine() }
            let bytes = UnsafeRawBufferPointer(rebasing: line[0..<lineLength])
            if bytes.starts(with: "D ".utf8) {
                // pin.reserveCapacity keeps the bytes in one buffer, zeroed above.
                guard Self.unescape(bytes.dropFirst(2), into: &pin, limit: Self.lineLimit) else {
                    throw Failure(description: "pinentry sent a malformed answer")
                }
            } else if bytes.starts(with: "OK".utf8) {
                return .pin(SecretBytes(consuming: &pin))
            } else if bytes.starts(with: "ERR".utf8) {
                // 83886179 is GPG_ERR_CANCELED, 83886142 GPG_ERR_TIMEOUT; any refusal ends the dialog.
                return bytes.starts(with: "ERR 83886142".utf8) ? .timedOut : .canceled
            } else if bytes.starts(with: "INQUIRE".utf8) {
                try send("CAN")
            }
        }
    }

    /// Ends the conversation (`BYE`).
    func bye() {
        try? send("BYE")
    }

    private func send(_ command: String) throws(Failure) {
        do throws(Errno) {
            try toProgram.writeAll(Array((command + "\n").utf8))
        } catch {
            throw Failure(description: "pinentry went away: \(error)")
        }
    }

    /// Reads replies up to `OK` (skipping status and comment lines).
    private func expectOK(deadline: MonotonicInstant) throws(Failure) -> Bool {
        while true {
            guard try readLine(deadline: deadline) else { throw Failure(description: "pinentry did not answer in time") }
            defer { clearLine() }
            let bytes = UnsafeRawBufferPointer(rebasing: line[0..<lineLength])
            if bytes.starts(with: "OK".utf8) { return true }
            if bytes.starts(with: "ERR".utf8) {
                let text = String(decoding: bytes.prefix(200), as: UTF8.self)
                throw Failure(description: "pinentry refused: \(DisplayText.sanitized(text))")
            }
        }
    }

    /// One line into `line`, without its newline; false when `deadline` passed.
    private func readLine(deadline: MonotonicInstant) throws(Failure) -> Bool {
        lineLength = 0
        var byte: UInt8 = 0
        while true {
            let count: Int
            do throws(Errno) {
                guard try Poll.wait(for: Int16(POLLIN), on: fromProgram.rawValue, until: deadline) != nil else { return false }
                count = try withUnsafeMutableBytes(of: &byte) { buffer throws(Errno) in try fromProgram.read(into: buffer) }
            } catch {
                throw Failure(description: "cannot read from pinentry: \(error)")
            }
            guard count == 1 else { throw Failure(description: "pinentry ended the conversation") }
            if byte == UInt8(ascii: "\n") { return true }
            guard lineLength < Self.lineLimit else {
                byte = 0
                throw Failure(description: "pinentry sent a line longer than Assuan allows")
            }
            line[lineLength] = byte
            lineLength += 1
            byte = 0
        }
    }

    private func clearLine() {
        SecretBytes.zero(UnsafeMutableRawBufferPointer(rebasing: line[0..<lineLength]))
        lineLength = 0
    }

    /// `text` percent-escaped as Assuan requires (`%`, CR, LF and every other
    /// control byte as `%XX`), cut at a whole character to at most `limit` bytes.
    static func escaped(_ text: String, limit: Int) -> String {
        var out: [UInt8] = []
        for scalar in text.unicodeScalars {
            var piece: [UInt8] = []
            if scalar.value < 0x20 || scalar == "%" || scalar.value == 0x7f {
                let digits = Array("0123456789ABCDEF".utf8)
                piece = [UInt8(ascii: "%"), digits[Int(scalar.value >> 4)], digits[Int(scalar.value & 0xf)]]
            } else {
                piece = Array(String(scalar).utf8)
            }
            if out.count + piece.count > limit { break }
            out += piece
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the percent-decoded `bytes` to `output`; false for a bad
    /// escape, or past `limit` bytes (which would reallocate `output`).
    static func unescape(_ bytes: some Collection<UInt8>, into output: inout [UInt8], limit: Int) -> Bool {
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            guard output.count < limit else { return false }
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return false }
            output.append(high << 4 | low)
        }
        return true
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
