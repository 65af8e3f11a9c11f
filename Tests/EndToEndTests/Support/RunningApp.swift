import Foundation
import TestSupport

extension GuardFixture {
    /// Starts the app `executable` as the child, `request --member child --stdin`,
    /// with its standard input left open for ``RunningApp/write(_:)``.
    func startApp(executable: String) throws -> RunningApp {
        try RunningApp(arguments: commandLine(as: child, executable: executable, ["request", "--member", "child", "--stdin"]))
    }
}

/// A process the test talks to while it runs: its standard input stays open
/// until ``endInput()``, its standard error is collected as it comes.
final class RunningApp: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let errors = LockedBox(Data())
    private let output = LockedBox(Data())
    private let ended = LockedBox<ContinuousClock.Instant?>(nil)
    /// The pipes (error, output) read to their end.
    private let drained = LockedBox(0)

    init(arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let errorPipe = Pipe(), outputPipe = Pipe()
        process.standardInput = input
        process.standardError = errorPipe
        process.standardOutput = outputPipe
        for (pipe, box) in [(errorPipe, errors), (outputPipe, output)] {
            pipe.fileHandleForReading.readabilityHandler = { [drained] handle in
                let chunk = handle.availableData
                if chunk.isEmpty {
                    handle.readabilityHandler = nil
                    drained.update { $0 += 1 }
                } else {
                    box.update { $0.append(chunk) }
                }
            }
        }
        // Foundation calls this on a queue of its own: the instant holds even
        // when a loaded machine keeps the test's own task from looking.
        process.terminationHandler = { [ended] _ in ended.set(ContinuousClock.now) }
        ignoreBrokenPipes()
        try process.run()
    }

    /// When the process exited, as Foundation saw it; nil while it runs.
    var endedAt: ContinuousClock.Instant? { ended.get() }

    var standardError: String { String(decoding: errors.get(), as: UTF8.self) }
    var standardOutput: String { String(decoding: output.get(), as: UTF8.self) }

    /// Writes to the process's standard input; lost if it has exited.
    func write(_ text: String) { try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8)) }

    func endInput() { try? input.fileHandleForWriting.close() }

    /// Waits up to `timeout` for `text` on the app's standard error.
    func waitForError(containing text: String, timeout: Duration = .seconds(30)) async -> Bool {
        await eventually(timeout: timeout) { standardError.contains(text) }
    }

    /// Answers the alert with "continue", then waits up to 30 s for the app to
    /// say its request waits for a parent or guardian.
    /// - Returns: the request's number.
    func waitForPendingRequest() async throws -> Int64 {
        guard await waitForError(containing: "Allow “") else {
            throw FixtureError("the app never showed the alert: \(standardError)")
        }
        write("continue\n")
        guard await waitForError(containing: "familyctl approve "),
              let match = standardError.firstMatch(of: /familyctl approve (\d+)/), let id = Int64(match.1) else {
            throw FixtureError("the request never waited for a guardian: \(standardError)")
        }
        return id
    }

    /// The exit status, once the app has exited (killed after 30 s), and
    /// what it wrote read to the end: the handlers that collect it run on
    /// Foundation's queue, and may not have seen the last of it when the
    /// process is reaped (a process of its own holding a pipe is waited for 2 s at most).
    func exitStatus() async -> Int32 {
        for _ in 0..<600 where process.isRunning {
            try? await Task.sleep(for: .milliseconds(50))
        }
        stop()
        for _ in 0..<40 where drained.get() < 2 {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationStatus
    }

    func stop() {
        endInput()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// Polls `condition` until it holds or `timeout` passes. The default is
/// loose: on two cores with the whole suite running beside it, a step that
/// takes a second alone took over 10 s. A check of how soon something
/// happens names its own bound.
/// - Returns: whether it held.
func eventually(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}

/// ``eventually(timeout:_:)`` for a condition that asks the Guard or runs a
/// program: `condition` is awaited, and what it throws ends the wait.
func eventually(timeout: Duration = .seconds(30), asking condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
