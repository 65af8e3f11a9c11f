#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import TestSupport
import Testing

@Suite struct BlockingExecutorTests {
    @Test func runsEveryJobWithNeverMoreThreadsThanItsBound() throws {
        let executor = BlockingExecutor(name: "test-bound", maximumThreads: 3, maximumQueued: 1_000)
        let running = Atomic<Int>(0)
        let mostAtOnce = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        for _ in 0..<200 {
            try executor.submit {
                let now = running.add(1, ordering: .relaxed).newValue
                var seen = mostAtOnce.load(ordering: .relaxed)
                while now > seen {
                    let (exchanged, original) = mostAtOnce.compareExchange(expected: seen, desired: now, ordering: .relaxed)
                    if exchanged { break }
                    seen = original
                }
                usleep(200)
                running.subtract(1, ordering: .relaxed)
                done.add(1, ordering: .relaxed)
            }
        }
        #expect(pollUntil { done.load(ordering: .relaxed) == 200 })
        let most = mostAtOnce.load(ordering: .relaxed)
        #expect(most <= 3)
        #expect(most >= 2, "jobs ran in parallel")
        #expect(executor.snapshot.threads <= 3)
    }

    @Test func refusesWorkWhenEveryThreadIsBusyAndTheQueueIsFull() throws {
        let executor = BlockingExecutor(name: "test-full", maximumThreads: 2, maximumQueued: 1)
        let gate = Gate()
        try executor.submit { gate.pass() }
        try executor.submit { gate.pass() }
        #expect(pollUntil { gate.arrived.load(ordering: .relaxed) == 2 })
        let queuedRan = Atomic<Bool>(false)
        try executor.submit { queuedRan.store(true, ordering: .relaxed) }
        #expect(executor.snapshot.queued == 1)

        let refusedRan = Atomic<Bool>(false)
        #expect(throws: BlockingExecutor.Saturated.self) {
            try executor.submit { refusedRan.store(true, ordering: .relaxed) }
        }
        gate.release()
        #expect(pollUntil { queuedRan.load(ordering: .relaxed) })
        usleep(20_000)
        let refusedJobRan = refusedRan.load(ordering: .relaxed)
        #expect(!refusedJobRan, "a refused job never runs")
        // Room again once the threads are free.
        let later = Atomic<Bool>(false)
        try executor.submit { later.store(true, ordering: .relaxed) }
        #expect(pollUntil { later.load(ordering: .relaxed) })
    }

    @Test func idleThreadsEndSoAnIdleProcessKeepsNone() throws {
        let executor = BlockingExecutor(name: "test-idle", maximumThreads: 4, maximumQueued: 16, idleTimeout: .milliseconds(50))
        let gate = Gate()
        for _ in 0..<4 { try executor.submit { gate.pass() } }
        #expect(pollUntil { gate.arrived.load(ordering: .relaxed) == 4 })
        #expect(executor.snapshot.threads == 4)
        gate.release()
        #expect(pollUntil { executor.snapshot.threads == 0 })
        // And new work starts a thread again.
        let ran = Atomic<Bool>(false)
        try executor.submit { ran.store(true, ordering: .relaxed) }
        #expect(pollUntil { ran.load(ordering: .relaxed) })
    }

    @Test func anIdleThreadTakesTheNextJobInsteadOfANewThreadStarting() throws {
        let executor = BlockingExecutor(name: "test-reuse", maximumThreads: 8, maximumQueued: 0)
        for _ in 0..<50 {
            let done = Atomic<Bool>(false)
            try executor.submit { done.store(true, ordering: .relaxed) }
            #expect(pollUntil { done.load(ordering: .relaxed) && executor.snapshot.idle == 1 })
        }
        #expect(executor.snapshot.threads == 1)
    }
}

@Suite struct SerialLaneTests {
    @Test func keepsOrderAndRunsOneJobAtATime() throws {
        let executor = BlockingExecutor(name: "test-lane", maximumThreads: 4, maximumQueued: 64)
        let lane = SerialLane(on: executor)
        let order = Mutex<[Int]>([])
        let inside = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        for index in 0..<500 {
            try lane.submit {
                if inside.add(1, ordering: .relaxed).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
                order.withLock { $0.append(index) }
                inside.subtract(1, ordering: .relaxed)
            }
        }
        #expect(pollUntil { order.withLock { $0.count } == 500 })
        #expect(order.withLock { $0 } == Array(0..<500))
        let jobsOverlapped = overlapped.load(ordering: .relaxed)
        #expect(!jobsOverlapped)
    }

    @Test func lanesShareThePoolAndRunBesideEachOther() throws {
        let executor = BlockingExecutor(name: "test-lanes", maximumThreads: 2, maximumQueued: 64)
        let gate = Gate()
        let first = SerialLane(on: executor)
        let second = SerialLane(on: executor)
        try first.submit { gate.pass() }
        try second.submit { gate.pass() }
        // Both lanes are inside their first job at once: each holds a thread.
        #expect(pollUntil { gate.arrived.load(ordering: .relaxed) == 2 })
        gate.release()
    }

    @Test func anIdleLaneOnASaturatedPoolRefusesAndRecovers() throws {
        let executor = BlockingExecutor(name: "test-lane-full", maximumThreads: 1, maximumQueued: 0)
        let gate = Gate()
        try executor.submit { gate.pass() }
        #expect(pollUntil { gate.arrived.load(ordering: .relaxed) == 1 })
        let lane = SerialLane(on: executor)
        #expect(throws: BlockingExecutor.Saturated.self) { try lane.submit {} }
        gate.release()
        #expect(pollUntil { executor.snapshot.idle == 1 })
        let ran = Atomic<Bool>(false)
        try lane.submit { ran.store(true, ordering: .relaxed) }
        #expect(pollUntil { ran.load(ordering: .relaxed) })
    }
}
