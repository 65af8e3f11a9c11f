@testable import GuardKit
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
}
