import Foundation
import Synchronization
import Testing
@testable import VarlinkClientKit
@testable import VarlinkServerKit

/// The server's quiet action runs once nothing has reached the loop for its
/// time, once per quiet spell, and never while calls keep coming.
@Suite("Server: the quiet action")
struct ServerQuietTests {
    @Test func itRunsOncePerQuietSpellAndNotWhileCallsKeepComing() throws {
        let runs = Mutex(0)
        var configuration = VarlinkServerConfiguration.testing()
        configuration.whenQuiet = .init(after: .milliseconds(300)) { runs.withLock { $0 += 1 } }
        try withServer(configuration: configuration) { _, path, _ in
            // Quiet from the start: once, and not again while nothing happens.
            #expect(eventually(timeout: .seconds(10)) { runs.withLock { $0 } == 1 })
            Thread.sleep(forTimeInterval: 1)
            #expect(runs.withLock { $0 } == 1)

            // Calls 50 ms apart for a second keep it from running (a gap of
            // 300 ms would be a quiet spell of its own).
            let client = try VarlinkClient(path: path)
            var calls = 0, longestGap: Duration = .zero
            var last = ContinuousClock.now
            let until = last + .seconds(1)
            while ContinuousClock.now < until {
                _ = try client.call("org.example.test.WhoAmI")
                calls += 1
                Thread.sleep(forTimeInterval: 0.05)
                longestGap = max(longestGap, ContinuousClock.now - last)
                last = ContinuousClock.now
            }
            if longestGap < .milliseconds(250) {
                #expect(runs.withLock { $0 } == 1, "ran while \(calls) calls came at most \(longestGap) apart")
            } else {
                print("ServerQuietTests: not checking that calls keep it from running: two of \(calls) calls came "
                    + "\(longestGap) apart on a loaded machine, a quiet spell of their own")
            }
            // Quiet again after the last call: once more.
            #expect(eventually(timeout: .seconds(10)) { runs.withLock { $0 } == 2 })
            Thread.sleep(forTimeInterval: 1)
            #expect(runs.withLock { $0 } == 2)
        }
    }
}
