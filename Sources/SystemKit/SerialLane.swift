import Synchronization

/// Runs jobs one at a time, in the order they came, on a ``BlockingExecutor``:
/// a serial queue that holds a thread of the pool only while it has work.
///
/// The Guard keeps one per connection, so a connection's slow calls are
/// answered in order while the pool bounds the threads all of them use.
public final class SerialLane: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var running = false
    }

    private let executor: BlockingExecutor
    private let state = Mutex(State())

    public init(on executor: BlockingExecutor) {
        self.executor = executor
    }

    /// Queues `job` behind the lane's others.
    /// - Throws: ``BlockingExecutor/Saturated`` when the lane is idle and the
    ///   pool refuses to take it on; `job` is then dropped.
    public func submit(_ job: @escaping @Sendable () -> Void) throws(BlockingExecutor.Saturated) {
        let start = state.withLock { state in
            state.jobs.append(job)
            defer { state.running = true }
            return !state.running
        }
        guard start else { return }
        do throws(BlockingExecutor.Saturated) {
            try executor.submit { [self] in drain() }
        } catch {
            state.withLock { state in
                state.jobs.removeAll()
                state.running = false
            }
            throw error
        }
    }

    /// Runs queued jobs until none is left, then lets the thread go.
    private func drain() {
        while let job = state.withLock({ state -> (@Sendable () -> Void)? in
            guard !state.jobs.isEmpty else {
                state.running = false
                return nil
            }
            return state.jobs.removeFirst()
        }) {
            job()
        }
    }
}
