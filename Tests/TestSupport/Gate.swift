#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A gate that pool jobs wait at until the test opens it.
public final class Gate: Sendable {
    private let open = Atomic<Bool>(false)
    /// How many jobs have reached the gate.
    public let arrived = Atomic<Int>(0)

    public init() {}

    /// Called by a job: waits until ``release()``.
    public func pass() {
        arrived.add(1, ordering: .relaxed)
        while !open.load(ordering: .acquiring) { usleep(500) }
    }

    public func release() { open.store(true, ordering: .releasing) }
}

/// Polls `condition` every millisecond for up to 5 s.
public func pollUntil(_ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .seconds(5)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}
