import SystemKit
import FamilyControlsModel
import FamilyConfiguration
import PAM

extension FamilyCtl {
    /// `familyctl authenticate USER --member child|individual [--pam-dir DIR] [--config FILE] [--child USER] [--stdin]`
    static func authenticate(_ tokens: [String]) throws(CommandFailure) {
        let arguments: Arguments
        do throws(UsageError) {
            arguments = try Arguments(tokens, .init(
                valued: ["--member", "--pam-dir", "--config", "--child"],
                flags: ["--stdin", "--help", "-h"]))
        } catch {
            throw CommandFailure(error)
        }
        if arguments.has("--help") || arguments.has("-h") {
            print(usage)
            return
        }
        guard arguments.operands.count == 1, let user = arguments.operands.first else {
            throw CommandFailure(.usage, arguments.operands.isEmpty
                ? "authenticate needs a user name"
                : "authenticate takes one user name, found \(arguments.operands.count)")
        }
        guard let memberName = arguments["--member"] else {
            throw CommandFailure(.usage, "authenticate needs --member child or --member individual")
        }
        guard let member = FamilyControlsMember(name: memberName) else {
            throw CommandFailure(.usage, "--member expects child or individual, found \"\(memberName.clipped)\"")
        }
        try requireRoot("authenticate")

        let configuration: GuardConfiguration
        do throws(ConfigError) {
            configuration = try GuardConfiguration.load(path: arguments["--config"] ?? GuardConfiguration.defaultPath)
        } catch {
            throw CommandFailure(.configuration, error.description)
        }
        let service = member == .child ? configuration.guardianService : configuration.individualService
        let conversation: any PAMConversation
        if arguments.has("--stdin") {
            conversation = StandardInputConversation()
        } else if let terminal = TerminalConversation() {
            conversation = terminal
        } else {
            throw CommandFailure(.usage, "no terminal to ask for the password on; use --stdin to read it from standard input")
        }
        let request = PAMRequest(
            service: service, user: user, requestingUser: arguments["--child"],
            tty: Terminal.name, configurationDirectory: arguments["--pam-dir"],
            promptTimeout: configuration.promptTimeout)
        do throws(PAMError) {
            try PAMAuthenticator().authenticateBlocking(request, conversation: conversation)
            print("familyctl: \(user) authenticated on the \(service) service")
        } catch {
            throw CommandFailure(.failure, error.description)
        }
    }
}
