@testable import GuardKit
import PAM
import Synchronization
import SystemKit
import Testing
@testable import GuardPolicy

/// What a person reads at a PAM prompt: pam_oath's raw prompt in words.
@Suite struct PromptWordsTests {
    @Test func pamOathsPromptNamesTheGuardianAndWhereTheCodeIs() {
        #expect(ChannelConversation.inWords("One-time password (OATH) for `bob': ")
                == "bob's one-time code (the 6 digits their authenticator app shows now): ")
        // Any other prompt is PAM's own.
        for prompt in ["Password: ", "One-time password (OATH) for `bob'", "Verification code: "] {
            #expect(ChannelConversation.inWords(prompt) == prompt)
        }
    }

    @Test func aPromptThatOffersGoingBackSaysHow() {
        #expect(ChannelConversation.offeringBack("Password: ") == "Password, or press Enter to go back: ")
        #expect(ChannelConversation.offeringBack(ChannelConversation.inWords("One-time password (OATH) for `bob': "))
                == "bob's one-time code (the 6 digits their authenticator app shows now), or press Enter to go back: ")
    }

    @Test func nothingTypedAtPAMsFirstPromptGoesBackAndPAMGetsNoAnswer() throws {
        let channel = ScriptedChannel { _ in .answer("") }
        let goingBack = ChannelConversation.GoingBack()
        let conversation = ChannelConversation(channel: channel, goingBack: goingBack)
        #expect(throws: PAMConversationEnd.canceled) {
            try conversation.respond(to: .secretPrompt("Password: "), deadline: .now.advanced(by: .seconds(5)))
        }
        #expect(goingBack.wentBack)
        #expect(channel.shown(.secret) == ["Password, or press Enter to go back: "])
    }

    /// Once PAM has had an answer, what it asks next could tell whether that
    /// answer was right: going back there would make a guess free.
    @Test func afterPAMHasHadAnAnswerNothingTypedIsAnAnswerLikeAnyOther() throws {
        let answers = Mutex(["123456", ""])
        let channel = ScriptedChannel { _ in .answer(answers.withLock { $0.removeFirst() }) }
        let goingBack = ChannelConversation.GoingBack()
        let conversation = ChannelConversation(channel: channel, goingBack: goingBack)
        let deadline = MonotonicInstant.now.advanced(by: .seconds(5))
        #expect(try conversation.respond(to: .secretPrompt("Password: "), deadline: deadline)?.count == 6)
        #expect(try conversation.respond(to: .textPrompt("Verification code: "), deadline: deadline)?.count == 0)
        #expect(!goingBack.wentBack)
        #expect(channel.prompts.map(\.message) == ["Password, or press Enter to go back: ", "Verification code: "])
    }

    @Test func withoutGoingBackNothingTypedIsGivenToPAM() throws {
        let channel = ScriptedChannel { _ in .answer("") }
        let answer = try ChannelConversation(channel: channel).respond(to: .secretPrompt("Password: "),
                                                                       deadline: .now.advanced(by: .seconds(5)))
        #expect(answer?.count == 0)
        #expect(channel.shown(.secret) == ["Password: "])
    }
}
