import Glibc
import Synchronization
import SystemKit
import TestSupport
import Testing

/// A caller waiting for a key another holds waits only until its deadline,
/// and only until it hangs up.
@Suite struct KeyedSerializerTests {
    final class Flag: Sendable {
        private let value = Atomic(false)
        func set() { value.store(true, ordering: .sequentiallyConsistent) }
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    }

    /// Holds `key` on a thread of its own until `release` is set; sets `held` once it holds it.
    private func hold(_ serializer: KeyedSerializer<String>, _ key: String, until release: Flag,
                      held: Flag) throws -> SystemThread {
        try SystemThread.spawn(name: "holder") {
            serializer.withExclusiveAccess(to: key) {
                held.set()
                while !release.isSet { usleep(1_000) }
            }
        }
    }

    @Test func aWaiterGivesUpAtItsDeadlineWithoutRunning() throws {
        let serializer = KeyedSerializer<String>()
        let release = Flag(), held = Flag()
        let holder = try hold(serializer, "app", until: release, held: held)
        #expect(pollUntil { held.isSet })
        let started = MonotonicInstant.now
        var waited = false
        let result = serializer.withExclusiveAccess(to: "app", until: .now.advanced(by: .milliseconds(300)),
                                                    unless: HangUp(), onWait: { waited = true }) { 42 }
        let elapsed = MonotonicInstant.now - started
        #expect(result == nil)
        #expect(waited)
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(3), "\(elapsed)")
        // Another key is free meanwhile.
        #expect(serializer.withExclusiveAccess(to: "other", until: .now, unless: HangUp()) { 1 } == 1)
        release.set()
        holder.join()
        // The key is free again: the next caller runs at once.
        #expect(serializer.withExclusiveAccess(to: "app", until: .now, unless: HangUp()) { 7 } == 7)
    }

    @Test func aWaiterWhoseCallerHangsUpIsWokenWithoutRunning() throws {
        let serializer = KeyedSerializer<String>()
        let release = Flag(), held = Flag()
        let holder = try hold(serializer, "app", until: release, held: held)
        defer {
            release.set()
            holder.join()
        }
        #expect(pollUntil { held.isSet })
        let hangUp = HangUp()
        let caller = try SystemThread.spawn(name: "hang-up") {
            usleep(200_000)
            hangUp.set()
        }
        defer { caller.join() }
        let result = serializer.withExclusiveAccess(to: "app", until: .now.advanced(by: .seconds(60)), unless: hangUp) { 42 }
        #expect(result == nil)
        #expect(hangUp.isSet, "woken by the hang-up, not by anything else")
        // A caller that hung up before asking does not wait at all.
        #expect(serializer.withExclusiveAccess(to: "app", until: .now.advanced(by: .seconds(60)), unless: hangUp) { 42 } == nil)
    }

    @Test func aWaiterRunsAsSoonAsTheHolderIsDone() throws {
        let serializer = KeyedSerializer<String>()
        let release = Flag(), held = Flag()
        let holder = try hold(serializer, "app", until: release, held: held)
        #expect(pollUntil { held.isSet })
        let releaser = try SystemThread.spawn(name: "releaser") {
            usleep(100_000)
            release.set()
        }
        let result = serializer.withExclusiveAccess(to: "app", until: .now.advanced(by: .seconds(10)), unless: HangUp()) { 42 }
        #expect(result == 42)
        releaser.join()
        holder.join()
    }
}
