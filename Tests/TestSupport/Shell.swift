import Foundation

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
@discardableResult
public func run(
    _ executable: String, _ arguments: [String], input: String? = nil,
    environment: [String: String?] = [:], currentDirectory: String? = nil
) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    process.environment = env
    if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
    let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = stdin
    ignoreBrokenPipes()
    try process.run()
    // A process that exits without reading its input must fail its test, not end the run.
    if let input { try? stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
    try? stdin.fileHandleForWriting.close()
    // Read both pipes concurrently so a chatty process never blocks on a full pipe.
    let errorData = LockedBox(Data())
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errorData.set(stderr.fileHandleForReading.readDataToEndOfFile())
        group.leave()
    }
    let outputData = stdout.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus,
        standardOutput: String(decoding: outputData, as: UTF8.self),
        standardError: String(decoding: errorData.get(), as: UTF8.self)
    )
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
