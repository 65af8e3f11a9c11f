#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// What a finished process did.
struct LockCommandResult: Sendable, CustomStringConvertible {
    var status: Int32
    var output: String
    var succeeded: Bool { status == 0 }
    var description: String { "exit \(status): \(output)" }
}

struct LockTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs programs for lock tests: real processes, as root or as a child user.
enum LockCommand {
    /// Runs `arguments` to completion and returns its status and combined output.
    /// Through TestSupport's `run`: Foundation's `readDataToEndOfFile` ends
    /// the test process when a signal interrupts its read (`try!` on EINTR).
    @discardableResult
    static func run(_ arguments: [String]) throws -> LockCommandResult {
        let result = try TestSupport.run("/usr/bin/env", arguments)
        return LockCommandResult(status: result.status, output: result.standardOutput + result.standardError)
    }

    /// Runs `arguments` and fails the test unless it exits 0.
    static func mustRun(_ arguments: [String]) throws {
        let result = try run(arguments)
        guard result.succeeded else { throw LockTestError("\(arguments.joined(separator: " ")): \(result)") }
    }

    /// Stops a background process and waits for it. SIGKILL, because a
    /// process started from a test thread inherits its blocked signals, and
    /// SIGTERM may be among them.
    static func stop(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Starts `arguments` in the background; its output is discarded.
    static func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
}
