import Foundation

/// Runs `body` with a fresh directory under /tmp (short, so socket paths fit
/// `sun_path`), removed afterwards with everything in it.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    var template = Array("/tmp/vl.XXXXXX".utf8CString)
    guard let created = mkdtemp(&template) else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    let path = String(cString: created)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Polls `condition` until it holds or `timeout` passes.
/// - Returns: whether it held.
func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

/// ``withTemporaryDirectory(_:)`` for async bodies.
func withTemporaryDirectoryAsync<Result>(_ body: (String) async throws -> Result) async throws -> Result {
    var template = Array("/tmp/vl.XXXXXX".utf8CString)
    guard let created = mkdtemp(&template) else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    let path = String(cString: created)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}
