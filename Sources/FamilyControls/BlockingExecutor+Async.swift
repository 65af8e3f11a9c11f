import SystemKit

extension BlockingExecutor {
    /// Runs `body` on the pool and waits for its result without holding the
    /// caller's thread: the bridge from `async` code to blocking code.
    ///
    /// It lives here, with the only `async` caller, and not in SystemKit: a
    /// continuation pulls Swift's concurrency runtime and libdispatch into
    /// whatever links it, and the Guard and `familyctl` have no use for either.
    /// - Throws: ``BlockingExecutor/Saturated`` when the pool refuses the work.
    package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws(Saturated) -> T {
        let result: Result<T, Saturated> = await withCheckedContinuation { continuation in
            do throws(Saturated) {
                try submit { continuation.resume(returning: .success(body())) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }
}
