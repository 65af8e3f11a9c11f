import Foundation
import Testing
import TestSupport

/// What one connection can make the Guard hold is bounded: calls waiting to
/// run, subscriptions, and what each call leaves behind until the close.
@Suite(.serialized, .enabled(if: canRunGuard && ScriptedApp.interpreter != nil,
                             "needs root, useradd, python3, and `swift build` products"))
struct GuardConnectionBoundsTests {
    /// The tally the scripted app printed after `prefix`, as JSON.
    private func tally(after prefix: String, in output: String) throws -> [String: Int] {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(prefix + " ") }) else {
            throw FixtureError("no \(prefix) line in: \(output)")
        }
        let json = Data(line.dropFirst(prefix.count + 1).utf8)
        return try JSONDecoder().decode([String: Int].self, from: json)
    }

    @Test func twoHundredThousandPipelinedSubscribesLeaveTheGuardSmallAndServingOthers() async throws {
        try await withGuard { guardd in
            let interpreter = try guardd.installScriptedApp()
            try guardd.resetMemoryPeak()
            let before = try guardd.memory("VmRSS")
            let calls = 200_000
            let app = try guardd.startScriptedApp(interpreter, mode: "pipeline", count: calls)
            defer { app.stop() }

            // The Guard stops reading the connection instead of queueing its calls…
            #expect(await eventually { guardd.log.contains("calls pending, its limit; reading no more until they finish") })
            // …and answers everyone else meanwhile.
            let other = try await guardd.app(["status"], as: guardd.adult)
            #expect(other.standardOutput == "status: notDetermined\n", "\(other.standardError)")

            #expect(await app.waitForError(containing: "flooded", timeout: .seconds(120)), "\(app.standardError)")
            let counts = try tally(after: "flooded", in: app.standardError)
            #expect(counts == ["status notDetermined": 4, "org.familycontrols.guard.LimitReached": calls - 4])
            let growth = try guardd.memory("VmHWM") - before
            #expect(growth < 32 << 10, "the Guard grew by \(growth) KiB at its peak")

            // The four subscriptions kept follow the status; the refused ones registered nothing.
            _ = try await guardd.call("SetStatus", ["user": .string(guardd.child.name), "app": .string(ScriptedApp.appID),
                                                    "status": "denied"])
            #expect(await eventually { app.standardError.components(separatedBy: "update ").count - 1 == 4 })
            #expect(app.standardError.components(separatedBy: "update denied").count - 1 == 4)
        }
    }

    @Test func sequentialCallsOnOneConnectionLeaveTheGuardsMemoryFlat() async throws {
        try await withGuard { guardd in
            let interpreter = try guardd.installScriptedApp()
            let rounds = 2_000
            let app = try guardd.startScriptedApp(interpreter, mode: "sequential", count: rounds)
            defer { app.stop() }
            #expect(await app.waitForError(containing: "warmed", timeout: .seconds(60)), "\(app.standardError)")
            // Anonymous memory: what calls could leak. The code they run is the
            // program's file, which a Guard quiet for a second lets go of and
            // the next call maps back (9,980 kB of "growth" in VmRSS seen).
            let warmed = try guardd.memory("RssAnon")
            app.write("go\n")
            #expect(await app.waitForError(containing: "done", timeout: .seconds(300)), "\(app.standardError)")
            let growth = try guardd.memory("RssAnon") - warmed

            let counts = try tally(after: "done", in: app.standardError)
            #expect(counts["GetStatus reply"] == 10 * rounds)
            #expect(counts["Subscribe reply"] == 4)
            #expect(counts["Subscribe org.familycontrols.guard.LimitReached"] == 10 * rounds - 4)
            #expect(counts["RequestAuthorization org.familycontrols.guard.InvalidAccountType"] == rounds)
            #expect(counts.filter { $0.key.hasPrefix("RevokeAuthorization") }.values.reduce(0, +) == rounds)
            #expect(growth < 4 << 10, "the Guard grew by \(growth) KiB after warming up")
        }
    }
}
