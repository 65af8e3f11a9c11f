import FamilyControls
import Testing

@Suite("AlertResponse: the alert's answer as people type it and as the Guard reads it")
struct AlertResponseTests {
    @Test(arguments: [("y", true), ("yes", true), ("Continue", true), (" YES ", true), ("\tcontinue  ", true),
                      ("CONTINUE", true), ("\u{00A0}y\u{2003}", true),
                      ("n", false), ("no", false), ("NO", false), ("don't allow", false), ("Don’t Allow", false),
                      ("DON’T ALLOW", false), ("  dont allow ", false), ("dont-allow", false), ("Don’t-Allow", false)])
    func alertAnswers(text: String, allows: Bool) {
        let response = AlertResponse(text)
        #expect(response == (allows ? .allow : .refuse))
    }

    /// Only blanks around the answer are ignored, not blanks inside it.
    @Test(arguments: ["", "   ", "maybe", "yess", "ok", "y e s", "don‘t allow", "don't  allow", "allow", "refuse"])
    func unclearAlertAnswersAreNeither(text: String) {
        #expect(AlertResponse(text) == nil)
    }

    @Test func eachAnswerTravelsInTheOneSpellingTheGuardReads() {
        #expect(AlertResponse.allow.wire == "continue")
        #expect(AlertResponse.refuse.wire == "dont-allow")
        for response in [AlertResponse.allow, .refuse] {
            #expect(AlertResponse(wire: response.wire) == response)
            // The wire spelling is also a typed answer: what a relay sends reads back the same.
            #expect(AlertResponse(response.wire) == response)
        }
    }

    /// The Guard takes anything but the exact spelling as no answer, which cancels.
    @Test(arguments: ["Continue", " continue", "yes", "y", "don't allow", "dont allow", "DONT-ALLOW", "", "allow"])
    func theGuardReadsOnlyTheExactSpelling(text: String) {
        #expect(AlertResponse(wire: text) == nil)
    }
}
