import Foundation
import PAM
import SystemKit
import TestSupport

/// A conversation that answers prompts from a script and records every message.
final class ScriptedConversation: PAMConversation, @unchecked Sendable {
    enum Step {
        case answer(String)
        case cancel
        /// Waits past the deadline before answering.
        case stall
    }

    private let steps: LockedBox<[Step]>
    let messages = LockedBox<[PAMMessage]>([])

    init(_ steps: [Step]) { self.steps = LockedBox(steps) }

    func respond(to message: PAMMessage, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes? {
        messages.update { $0.append(message) }
        guard message.isPrompt else { return nil }
        let step = steps.update { $0.isEmpty ? Step.cancel : $0.removeFirst() }
        switch step {
        case .answer(let text):
            return SecretBytes(text)
        case .cancel:
            throw .canceled
        case .stall:
            while MonotonicInstant.now <= deadline { Thread.sleep(forTimeInterval: 0.02) }
            return SecretBytes("too late")
        }
    }
}
