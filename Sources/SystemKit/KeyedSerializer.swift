#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Runs work for one key at a time: a second caller with the same key (the
/// same user, or the same user and app) waits for the first to finish.
///
/// Blocks the calling thread, so only for threads of the Guard's own, never
/// the cooperative pool.
package final class KeyedSerializer<Key: Hashable & Sendable>: Sendable {
    private struct State {
        var busy: Set<Key> = []
    }
    private let state = Mutex(State())
    private let condition = ConditionSignal()

    /// Runs `body` once no other caller holds `key`; `onWait` runs first
    /// when another one does.
    package init() {}

    package func withExclusiveAccess<R, E: Error>(to key: Key, onWait: () -> Void = {}, _ body: () throws(E) -> R) throws(E) -> R {
        if !state.withLock({ $0.busy.insert(key).inserted }) {
            onWait()
            condition.wait { state.withLock { $0.busy.insert(key).inserted } }
        }
        defer {
            state.withLock { _ = $0.busy.remove(key) }
            condition.broadcast()
        }
        return try body()
    }

    /// Runs `body` once no other caller holds `key`, as
    /// ``withExclusiveAccess(to:onWait:_:)`` does, but waits for it only
    /// until `deadline` and only until `hangUp` is set (woken by it at once:
    /// a caller that hung up gives its thread back).
    /// - Returns: what `body` returned, or nil, without running `body`, when
    ///   the key was not free by `deadline` or the caller hung up first.
    package func withExclusiveAccess<R, E: Error>(
        to key: Key, until deadline: MonotonicInstant, unless hangUp: HangUp,
        onWait: () -> Void = {}, _ body: () throws(E) -> R
    ) throws(E) -> R? {
        if !state.withLock({ $0.busy.insert(key).inserted }) {
            onWait()
            guard !hangUp.isSet else { return nil }
            var acquired = false
            hangUp.watch(condition) {
                condition.wait(until: deadline, ready: {
                    acquired = state.withLock { $0.busy.insert(key).inserted }
                    return acquired || hangUp.isSet
                }, onTimeout: {})
            }
            if !acquired { return nil }
        }
        defer {
            state.withLock { _ = $0.busy.remove(key) }
            condition.broadcast()
        }
        return try body()
    }
}

/// A condition variable around a predicate that takes its own lock.
package final class ConditionSignal: @unchecked Sendable {
    // pthread primitives must not move: keep them on the heap.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Waits until `ready()` returns true; `ready` is re-run after each broadcast.
    package func wait(until ready: () -> Bool) {
        pthread_mutex_lock(mutex)
        while !ready() { pthread_cond_wait(cond, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// Waits until `ready()` returns true or `deadline` passes; calls `onTimeout`
    /// in the second case.
    package func wait(until deadline: MonotonicInstant, ready: () -> Bool, onTimeout: () -> Void) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready() {
            let left = deadline - .now
            if left <= .zero {
                onTimeout()
                return
            }
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let (seconds, attoseconds) = left.components
            var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
            var wake = timespec(tv_sec: now.tv_sec + Int(seconds) + nanoseconds / 1_000_000_000, tv_nsec: 0)
            nanoseconds %= 1_000_000_000
            wake.tv_nsec = nanoseconds
            pthread_cond_timedwait(cond, mutex, &wake)
        }
    }

    package func broadcast() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }
}
