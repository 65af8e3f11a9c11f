import Foundation
import SystemKit

/// The outcome of a finished process.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
    public var succeeded: Bool { status == 0 }

    public init(status: Int32, standardOutput: String, standardError: String) {
        self.status = status
        self.standardOutput = standardOutput
        self.standardError = standardError
    }
}

/// Runs an executable to completion, feeding `input` on standard input.
/// `environment` entries are added to (or, with nil, removed from) the inherited environment.
///
/// Started with `posix_spawn` and pipes made close-on-exec, every other
/// descriptor closed in it (``HelperProcess``), not with Foundation's
/// `Process`: its pipes reach any process another test starts at the same
/// moment, and a server among those (slapd, sssd, a Guard) would hold this
/// command's output open, so this call would wait for that server to end.
@discardableResult
public func run(
    _ executable: String, _ arguments: [String], input: String? = nil,
    environment: [String: String?] = [:], currentDirectory: String? = nil
) throws -> ProcessResult {
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    var program = executable, argv = arguments
    if let currentDirectory {
        program = "/usr/bin/env"
        argv = ["-C", currentDirectory, "--", executable] + arguments
    }
    ignoreBrokenPipes()
    let stdin = try ClosingPipe(), stdout = try ClosingPipe(), stderr = try ClosingPipe()
    let process: HelperProcess
    do {
        process = try HelperProcess.spawn(program, arguments: argv, environment: env.map { "\($0.key)=\($0.value)" },
                                          input: stdin.read, output: stdout.write, error: stderr.write)
    } catch {
        throw FixtureError("cannot start \(executable): \(error)")
    }
    stdin.closeRead(); stdout.closeWrite(); stderr.closeWrite()
    // Feed the input and read both pipes at once, so a chatty process never
    // blocks on a full pipe; a process that exits without reading its input
    // fails its test (EPIPE), not the run. Each on a thread of its own, never
    // on Dispatch's global queue: on Linux that queue runs as many items as
    // there are processors and adds a thread for a blocked one only about once
    // a second, so with many tests' processes running, a prompt's answer
    // would wait its turn for tens of seconds.
    let errorData = LockedBox([UInt8]())
    let done = DispatchGroup()
    done.enter()
    Thread {
        errorData.set(stderr.readToEnd())
        done.leave()
    }.start()
    done.enter()
    Thread {
        if let input { stdin.writeAll(Array(input.utf8)) }
        stdin.closeWrite()
        done.leave()
    }.start()
    let outputData = stdout.readToEnd()
    done.wait()
    let status: Int32
    switch try? process.waitForExit(until: nil) {
    case .exited(let code)?: status = code
    case .killed(let signal, _)?: status = signal
    case nil: status = -1
    }
    return ProcessResult(
        status: status,
        standardOutput: String(decoding: outputData, as: UTF8.self),
        standardError: String(decoding: errorData.get(), as: UTF8.self)
    )
}

/// A pipe made close-on-exec from the start (``FileDescriptor/pipe()``),
/// so no process but the one it is handed to ever holds it.
private final class ClosingPipe: @unchecked Sendable {
    private var readEnd: FileDescriptor?
    private var writeEnd: FileDescriptor?
    var read: CInt { readEnd?.rawValue ?? -1 }
    var write: CInt { writeEnd?.rawValue ?? -1 }

    init() throws {
        do {
            (readEnd, writeEnd) = try FileDescriptor.pipe()
        } catch {
            throw FixtureError("cannot make a pipe: \(error)")
        }
    }

    func closeRead() { readEnd = nil }
    func closeWrite() { writeEnd = nil }

    func readToEnd() -> [UInt8] {
        defer { closeRead() }
        return (try? readEnd?.readAll(limit: .max)) ?? []
    }

    func writeAll(_ bytes: [UInt8]) {
        try? writeEnd?.writeAll(bytes)
    }
}

/// Makes writing to a pipe whose reader is gone an `EPIPE` error instead of
/// a `SIGPIPE` that would end the whole test run.
public func ignoreBrokenPipes() {
    _ = brokenPipesIgnored
}

private let brokenPipesIgnored: Void = {
    signal(SIGPIPE, SIG_IGN)
}()

/// Runs a shell command line (`/bin/sh -c`).
@discardableResult
public func sh(_ command: String, input: String? = nil) throws -> ProcessResult {
    try run("/bin/sh", ["-c", command], input: input)
}

/// A value shared between threads under a lock, for test plumbing.
public final class LockedBox<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    public init(_ value: Value) { self.value = value }
    public func get() -> Value { lock.withLock { value } }
    public func set(_ newValue: Value) { lock.withLock { value = newValue } }
    public func update<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&value) } }
}

/// Errors from fixtures, with the command's own output.
public struct FixtureError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs blocking work (waiting for a process, say) on a thread of its own and
/// awaits it, so tests never hold the few threads of Swift's cooperative pool
/// that other tests need to make progress.
public func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do {
                continuation.resume(returning: try body())
            } catch {
                continuation.resume(throwing: error)
            }
        }
        thread.start()
    }
}

/// Runs `body` with `fixture`, then `tearDown` (which blocks) through
/// ``offload(_:)``, also when `body` throws.
public func tearingDown<Fixture: Sendable, R>(_ fixture: Fixture, with tearDown: @escaping @Sendable (Fixture) -> Void,
                                              _ body: (Fixture) async throws -> R) async throws -> R {
    do {
        let result = try await body(fixture)
        try await offload { tearDown(fixture) }
        return result
    } catch {
        try await offload { tearDown(fixture) }
        throw error
    }
}

/// ``run(_:_:input:environment:currentDirectory:)`` without blocking the cooperative pool.
@discardableResult
public func run(
    _ executable: String, _ arguments: [String], input: String? = nil,
    environment: [String: String?] = [:], currentDirectory: String? = nil
) async throws -> ProcessResult {
    try await offload {
        try run(executable, arguments, input: input, environment: environment, currentDirectory: currentDirectory)
    }
}

/// ``sh(_:input:)`` without blocking the cooperative pool.
@discardableResult
public func sh(_ command: String, input: String? = nil) async throws -> ProcessResult {
    try await run("/bin/sh", ["-c", command], input: input)
}
