// familycontrols-demo: a small app that uses only the public FamilyControls API.
// Install it as ROOT/org.familycontrols.Demo/familycontrols-demo with
// Config/demo/org.familycontrols.Demo.desktop beside it.
import FamilyControls
import Foundation

@main
struct DemoApp {
    static let usage = """
        usage: familycontrols-demo request --member child|individual [--stdin]
               familycontrols-demo watch [--member child|individual] [--stdin]
               familycontrols-demo revoke [--stdin]
               familycontrols-demo update [--stdin]
               familycontrols-demo status
               familycontrols-demo monitor
               familycontrols-demo --help

        request  ask for an authorization and print the status it ends in
        watch    request, then print every change of status until interrupted
        revoke   give up this app's authorization
        update   swap in the new version staged beside this app's folder
                 (ROOT/.org.familycontrols.Demo.update; Linux only)
        status   print the current status
        monitor  as the monitor the Guard runs (the desktop entry's
                 X-FamilyControls-Monitor=), print a heartbeat line every
                 second until SIGTERM; started any other way, say so and
                 exit 2 (Linux only)
        --stdin  answer the prompts from standard input instead of a terminal
        """

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard !arguments.isEmpty else { fail(usage, code: 2) }
        if ["-h", "--help", "help"].contains(arguments[0]) {
            print(usage)
            exit(0)
        }
        let verb = arguments.removeFirst()
        var member = FamilyControlsMember.child
        while let option = arguments.first {
            arguments.removeFirst()
            switch option {
            case "--stdin":
                AuthorizationCenter.shared.prompter = StandardInputPrompter()
            case "--member":
                guard let value = arguments.first, let parsed = FamilyControlsMember(name: value) else {
                    fail("familycontrols-demo: --member expects child or individual", code: 2)
                }
                arguments.removeFirst()
                member = parsed
            case "-h", "--help":
                print(usage)
                exit(0)
            default:
                fail("familycontrols-demo: unknown option \(option)\n\(usage)", code: 2)
            }
        }
        switch verb {
        case "request": await request(member)
        case "watch": await watch(member)
        case "revoke": await revoke()
        case "update": await update()
        case "status": printStatus()
        case "monitor": await monitor()
        default: fail("familycontrols-demo: unknown verb \(verb)\n\(usage)", code: 2)
        }
    }

    static func request(_ member: FamilyControlsMember) async {
        do {
            try await AuthorizationCenter.shared.requestAuthorization(for: member)
            printStatus()
            exit(0)
        } catch {
            report(error)
            printStatus()
            exit(1)
        }
    }

    /// Requests, then prints every status change, one per line, until interrupted.
    static func watch(_ member: FamilyControlsMember) async {
        do {
            try await AuthorizationCenter.shared.requestAuthorization(for: member)
        } catch {
            report(error)
            exit(1)
        }
        for await status in AuthorizationCenter.shared.authorizationStatusUpdates {
            FileHandle.standardOutput.write(Data("status: \(status)\n".utf8))
        }
    }

    static func revoke() async {
        let result: Result<Void, any Error> = await withCheckedContinuation { continuation in
            AuthorizationCenter.shared.revokeAuthorization { continuation.resume(returning: $0) }
        }
        switch result {
        case .success:
            print("revoke completed")
            exit(0)
        case .failure(let error):
            report(error)
            exit(1)
        }
    }

    static func update() async {
        do {
            switch try await AuthorizationCenter.shared.requestUpdate() {
            case .signed: print("update: swapped in, signed")
            case .approvedByGuardian: print("update: swapped in, approved by a parent or guardian")
            }
            exit(0)
        } catch {
            report(error)
            exit(1)
        }
    }

    /// The monitor: a heartbeat line every second, each written at once,
    /// until SIGTERM (exit 0). Anyone else who runs it is told it is not the
    /// monitor, with status 2.
    static func monitor() async {
        guard let context = await AuthorizationCenter.shared.monitorContext else {
            var line = "familycontrols-demo: not running as this app's monitor: the Guard starts the monitor itself, "
                + "as the child, in each of the child's sessions while the app is approved"
            if let detail = AuthorizationCenter.shared.lastErrorMessage { line += " (\(detail))" }
            fail(line, code: 2)
        }
        signal(SIGTERM) { _ in _exit(0) }
        // Approved already (the Guard runs a monitor only then): the request
        // answers at once, and the status follows the Guard from then on.
        // Nobody is at a sheet here, so an alert is declined at once.
        AuthorizationCenter.shared.prompter = NoOneHere()
        try? await AuthorizationCenter.shared.requestAuthorization(for: .child)
        var beat = 0
        while true {
            beat += 1
            let status = AuthorizationCenter.shared.authorizationStatus
            let line = "heartbeat \(beat): \(context.appID) for \(context.user) in session \(context.session), "
                + "authorization \(status)\n"
            FileHandle.standardOutput.write(Data(line.utf8))
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// The monitor's prompter: no one is at a monitor's screen to answer.
    struct NoOneHere: Prompter {
        func respond(to prompt: AuthorizationPrompt) -> String? { nil }
    }

    static func printStatus() {
        print("status: \(AuthorizationCenter.shared.authorizationStatus)")
    }

    static func report(_ error: any Error) {
        if let error = error as? FamilyControlsError {
            var line = "error \(error.rawValue) \(error.caseName): \(error.errorDescription ?? "")"
            if let detail = AuthorizationCenter.shared.lastErrorMessage { line += " (\(detail))" }
            FileHandle.standardError.write(Data((line + "\n").utf8))
        } else {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        }
    }

    static func fail(_ message: String, code: Int32) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(code)
    }
}
