#if canImport(Glibc)
import Glibc
#endif

/// A bounded pool of threads for work that blocks: PAM waiting for a person,
/// a lock walking a tree, a socket read. Such work must never hold a thread of
/// Swift's cooperative pool, nor should each piece of it get a thread of its
/// own, which lets a flood of callers exhaust the process.
///
/// Threads start on demand up to `maximumThreads` and end after
/// `idleTimeout` with nothing to do, so an idle process keeps none. Beyond
/// the bound, up to `maximumQueued` jobs wait their turn in order; past that,
/// ``submit(_:)`` refuses at once with ``Saturated`` rather than queue without
/// end. Like swift-nio's `NIOThreadPool`, in one small type.
public final class BlockingExecutor: @unchecked Sendable {
    /// The pool is full and so is its queue.
    public struct Saturated: Error, CustomStringConvertible, Sendable {
        public let name: String
        public var description: String { "\(name): every thread is busy and the queue is full" }
    }

    /// What the pool holds now, for tests and diagnostics.
    public struct Snapshot: Sendable, Equatable {
        public var threads: Int
        public var idle: Int
        public var queued: Int
    }

    public let name: String
    public let maximumThreads: Int
    public let maximumQueued: Int
    private let idleTimeout: Duration

    // Guarded by `mutex`; pthread primitives must not move, so they live on the heap.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs = JobQueue()
    private var threads = 0
    private var idle = 0

    /// - Parameters:
    ///   - name: names the threads (`ps -L`) and the ``Saturated`` error.
    ///   - maximumThreads: at most this many jobs run at once.
    ///   - maximumQueued: at most this many wait beyond those.
    ///   - idleTimeout: how long a thread with nothing to do lingers.
    public init(name: String, maximumThreads: Int, maximumQueued: Int, idleTimeout: Duration = .seconds(30)) {
        precondition(maximumThreads > 0 && maximumQueued >= 0)
        self.name = name
        self.maximumThreads = maximumThreads
        self.maximumQueued = maximumQueued
        self.idleTimeout = idleTimeout
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(wake, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        // Every thread holds the executor, so none is left when this runs.
        pthread_cond_destroy(wake)
        pthread_mutex_destroy(mutex)
        wake.deallocate()
        mutex.deallocate()
    }

    /// Runs `job` on one of the pool's threads, soon or after the jobs queued before it.
    /// - Throws: ``Saturated`` when every thread is busy and the queue is full;
    ///   `job` is then dropped without running.
    public func submit(_ job: @escaping @Sendable () -> Void) throws(Saturated) {
        pthread_mutex_lock(mutex)
        if jobs.count < idle {
            // A waiting thread takes it.
            jobs.append(job)
            pthread_cond_signal(wake)
            pthread_mutex_unlock(mutex)
            return
        }
        if threads < maximumThreads {
            // Started under the lock: the new thread waits for it, then finds its job.
            do throws(Errno) {
                try SystemThread.spawn(name: name) { [self] in work() }.detach()
                threads += 1
                jobs.append(job)
                pthread_mutex_unlock(mutex)
                return
            } catch {
                // Out of threads: queue the job when a thread will come back
                // for it; refuse it when none will.
                guard threads > 0 else {
                    pthread_mutex_unlock(mutex)
                    throw Saturated(name: name)
                }
            }
        }
        guard jobs.count - idle < maximumQueued else {
            pthread_mutex_unlock(mutex)
            throw Saturated(name: name)
        }
        jobs.append(job)
        pthread_mutex_unlock(mutex)
    }

    /// How many threads the pool holds, how many of them wait, and how many jobs wait.
    public var snapshot: Snapshot {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return Snapshot(threads: threads, idle: idle, queued: jobs.count)
    }

    /// A pool thread: runs jobs until none comes for `idleTimeout`.
    private func work() {
        pthread_mutex_lock(mutex)
        while true {
            if let job = jobs.popFirst() {
                pthread_mutex_unlock(mutex)
                job()
                pthread_mutex_lock(mutex)
                continue
            }
            var deadline = timespec()
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let (seconds, attoseconds) = idleTimeout.components
            let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
            deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
            deadline.tv_nsec = nanoseconds % 1_000_000_000
            idle += 1
            var timedOut = false
            while jobs.isEmpty && !timedOut {
                timedOut = pthread_cond_timedwait(wake, mutex, &deadline) == ETIMEDOUT
            }
            idle -= 1
            if jobs.isEmpty {
                threads -= 1
                pthread_mutex_unlock(mutex)
                return
            }
        }
    }
}

/// First in, first out, without moving every element on each removal.
private struct JobQueue {
    typealias Job = @Sendable () -> Void
    private var storage: [Job?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    mutating func append(_ job: @escaping Job) { storage.append(job) }

    mutating func popFirst() -> Job? {
        guard head < storage.count else { return nil }
        defer {
            storage[head] = nil
            head += 1
            if head == storage.count {
                storage.removeAll(keepingCapacity: storage.count <= 64)
                head = 0
            } else if head >= 64 && head * 2 >= storage.count {
                storage.removeFirst(head)
                head = 0
            }
        }
        return storage[head]
    }
}
