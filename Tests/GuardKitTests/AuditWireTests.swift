import Foundation
@testable import GuardKit
import GuardProtocol
import SystemKit
import Testing
import TestSupport
@testable import GuardStore

/// The audit trail on the wire (`ReadAudit`): the stored words travel as the
/// interface's enums, and nothing a row holds is lost on the way.
@Suite struct AuditWireTests {
    private func event(action: AuditAction = .approve, outcome: AuditOutcome, detail: String? = nil) -> AuditEvent {
        AuditEvent(at: .now, actor: "mum", action: action, user: "alice", appID: "org.example.Filter", member: .child,
                   outcome: outcome, detail: detail)
    }

    @Test func everyOutcomeAndActionTheGuardWritesIsACaseOfTheInterface() throws {
        // Each constant the Guard declares, read from its source so a new one cannot be missed.
        for (file, type) in [("AuditOutcome.swift", "AuditOutcome"), ("AuditAction.swift", "AuditAction")] {
            let source = try String(contentsOfFile: "\(packageRoot)/Sources/GuardStore/\(file)", encoding: .utf8)
            let words = source.matches(of: try Regex("\(type)\\(rawValue: \"([^\"]+)\"\\)")).compactMap { $0.output[1].substring }
            #expect(words.count >= 10, "\(file): \(words)")
            for word in words {
                let wire = type == "AuditOutcome" ? event(outcome: AuditOutcome(rawValue: String(word))).wire.outcome.rawValue
                                                  : event(action: AuditAction(rawValue: String(word)), outcome: .approved).wire.action.rawValue
                #expect(wire != "other", "\(type) \(word) has no case in the interface")
            }
        }
        // And what the monitors, the locks and an administrator's set write.
        for word in ["started", "stopped", "continued", "restarted", "waiting", "failed", "locked", "ended", "unlocked",
                     "notDetermined", "denied", "approved"] {
            #expect(event(outcome: AuditOutcome(rawValue: word)).wire.outcome.rawValue == word)
        }
    }

    @Test func theStoredWordsBecomeOneIdentifier() {
        #expect(event(outcome: .noEffect).wire.outcome == .noEffect)
        #expect(event(outcome: .authenticationFailed).wire.outcome == .authenticationFailed)
        #expect(event(outcome: .noEffect, detail: "not approved").wire.detail == "not approved")
    }

    @Test func anUnenforcedLocksReasonMovesIntoTheDetail() {
        let wire = event(action: .lock, outcome: AuditOutcome(rawValue: "unenforced: ramfs holds no immutable attribute")).wire
        #expect(wire.outcome == .unenforced)
        #expect(wire.detail == "ramfs holds no immutable attribute")
    }

    @Test func wordsTheInterfaceDoesNotNameAreOtherAndKeptInTheDetail() {
        let wire = event(action: AuditAction(rawValue: "zap"), outcome: AuditOutcome(rawValue: "zapped"), detail: "by hand").wire
        #expect(wire.action == .other)
        #expect(wire.outcome == .other)
        #expect(wire.detail == "action zap; outcome zapped; by hand")
    }
}
