@testable import GuardKit
import SystemKit
import Testing
@testable import GuardPolicy
@testable import GuardStore

/// The audit trail as the system log carries it: fixed fields, in a fixed
/// order, each readable by a parser that splits on spaces and `=`.
@Suite struct AuditLineTests {
    private func event(actor: String = "mum", user: String = "alice", appID: String? = "org.example.Filter",
                       outcome: AuditOutcome = .approved, detail: String? = nil) -> AuditEvent {
        AuditEvent(at: .now, actor: actor, action: .approve, user: user, appID: appID, member: .child, outcome: outcome,
                   detail: detail)
    }

    @Test func everyFieldIsThereInItsOrder() {
        let line = AuditLine(event(), id: 42, host: "lab-12")
        #expect(line.text == "familycontrols: host=lab-12 id=42 action=approve outcome=approved user=alice "
            + "app=org.example.Filter member=child by=mum request=-")
    }

    /// The pending request an event belongs to, from its detail's start, as
    /// every event of a request's life writes it.
    @Test func anEventOfAPendingRequestNamesItsNumber() {
        #expect(AuditLine(event(detail: "request 12: a parent or guardian is asked to approve it"), id: 3, host: "h").text
            .contains(" by=mum request=12 detail="))
        #expect(event(detail: "request 7").requestID == 7)
        let fields = AuditLine(event(detail: "request 7"), id: 3, host: "h").journalFields(priority: .notice)
        #expect(fields.contains("FAMILYCONTROLS_REQUEST=7"))
        for detail in [nil, "requested by the app", "request : x", "request 12x", "a detail naming request 4", "request 99999999999999999999"] {
            #expect(event(detail: detail).requestID == nil, "\(String(describing: detail))")
        }
    }

    @Test func aMissingValueIsADashAndADetailComesLast() {
        let line = AuditLine(event(appID: nil, detail: "no longer a child of any family"), id: nil, host: "h")
        #expect(line.text == "familycontrols: host=h id=- action=approve outcome=approved user=alice app=- member=child by=mum request=- "
            + "detail=\"no longer a child of any family\"")
    }

    @Test func aValueThatCouldForgeAFieldIsQuotedAndEscaped() {
        // A detail quoting hostile text: a parser splitting on spaces and = must not see a second user= or by=.
        let line = AuditLine(event(actor: "configuration (/etc/x.conf)", detail: "folder \"a b\" user=root\\ by=x\nnext"),
                             id: 1, host: "h")
        #expect(line.text.hasSuffix("by=\"configuration (/etc/x.conf)\" request=- detail=\"folder \\\"a b\\\" user=root\\\\ by=x\\\\x0Anext\""),
                "\(line.text)")
        #expect(!line.text.contains("\n"))
        #expect(AuditLine.quoted("") == "\"\"")
        #expect(AuditLine.quoted("authentication failed") == "\"authentication failed\"")
    }

    @Test func theJournalGetsEachFieldAsOneOfItsOwn() {
        let fields = AuditLine(event(outcome: .authenticationFailed), id: 7, host: "lab-12").journalFields(priority: .alert)
        #expect(fields.contains("MESSAGE_ID=\(AuditLine.messageID)"))
        #expect(fields.contains("PRIORITY=1") && fields.contains("SYSLOG_FACILITY=10"))
        #expect(fields.contains("FAMILYCONTROLS_USER=alice") && fields.contains("FAMILYCONTROLS_BY=mum"))
        #expect(fields.contains("FAMILYCONTROLS_OUTCOME=authentication failed"))
        #expect(fields.contains("FAMILYCONTROLS_HOST=lab-12") && fields.contains("FAMILYCONTROLS_ID=7"))
        #expect(fields.first?.hasPrefix("MESSAGE=familycontrols: host=lab-12 id=7 action=approve") == true)
        #expect(AuditLine.messageID.count == 32 && AuditLine.messageID.allSatisfy(\.isHexDigit))
    }

    @Test func failuresAreAlertsDecisionsNoticesTheRestInfo() {
        #expect(AuditForwarder.priority(of: event(outcome: .authenticationFailed)) == .alert)
        #expect(AuditForwarder.priority(of: event(outcome: .revoked)) == .notice)
        #expect(AuditForwarder.priority(of: event(outcome: .started)) == .info)
    }
}
