import Glibc
import Synchronization
import SystemKit
import TestSupport
import Testing

/// A caller waiting for a key another holds waits only until its deadline,
/// and only while it still wants the key.
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
                                                    while: { true }, onWait: { waited = true }) { 42 }
        let elapsed = MonotonicInstant.now - started
        #expect(result == nil)
        #expect(waited)
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(3), "\(elapsed)")
        // Another key is free meanwhile.
        #expect(serializer.withExclusiveAccess(to: "other", until: .now, while: { true }) { 1 } == 1)
        release.set()
        holder.join()
        // The key is free again: the next caller runs at once.
        #expect(serializer.withExclusiveAccess(to: "app", until: .now, while: { true }) { 7 } == 7)
    }

    @Test func aWaiterThatNoLongerWantsTheKeyStopsWithinAQuarterSecond() throws {
        let serializer = KeyedSerializer<String>()
        let release = Flag(), held = Flag()
        let holder = try hold(serializer, "app", until: release, held: held)
        defer {
            release.set()
            holder.join()
        }
        #expect(pollUntil { held.isSet })
        let gone = MonotonicInstant.now.advanced(by: .milliseconds(200))
        let result = serializer.withExclusiveAccess(to: "app", until: .now.advanced(by: .seconds(60)),
                                                    while: { MonotonicInstant.now < gone }) { 42 }
        #expect(result == nil)
        #expect(MonotonicInstant.now - gone < .seconds(1))
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
        let result = serializer.withExclusiveAccess(to: "app", until: .now.advanced(by: .seconds(10)), while: { true }) { 42 }
        #expect(result == 42)
        releaser.join()
        holder.join()
    }
}
