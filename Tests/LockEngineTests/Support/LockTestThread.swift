import Foundation

/// Runs each job of a task on a fresh thread of its own.
///
/// Lock tests block for seconds (processes, file systems); on Swift's small
/// cooperative pool that would starve every other test in the process.
/// As a task executor preference it moves the blocking work off the pool
/// while staying in the same task, so Swift Testing still attributes each
/// expectation to its test.
final class LockTestThreadExecutor: TaskExecutor {
    static let shared = LockTestThreadExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { job.runSynchronously(on: executor) }
        thread.name = "lock-test"
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// Runs blocking test code off the cooperative pool, in the current task.
func blocking<R>(_ body: () throws -> R) async throws -> R {
    try await withTaskExecutorPreference(LockTestThreadExecutor.shared) {
        // The preference applies from the next suspension: suspend once so the
        // task resumes on its own thread before the blocking work starts.
        await Task.yield()
        return try body()
    }
}
