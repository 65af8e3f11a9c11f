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
               familycontrols-demo limits set [--hours WINDOWS] [--daily DURATION] [--at-end lock|end] [--stdin]
               familycontrols-demo limits show
               familycontrols-demo more-time MINUTES [--reason TEXT] [--stdin]
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
        limits   set this app's login limits for its child (WINDOWS like
                 "Mon-Fri 07:30-20:00", DURATION like 90m; none given: no
                 limit of that kind): stricter ones take effect at once,
                 looser ones wait for a parent or guardian; show prints the
                 limits in force (Linux only)
        more-time  ask a parent or guardian for MINUTES more today (Linux only)
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
        if verb == "limits" || verb == "more-time" { await timeLimits(verb, arguments) }
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

    /// `limits set …`, `limits show`, `more-time MINUTES`: the child's login limits (Linux only).
    static func timeLimits(_ verb: String, _ arguments: [String]) async -> Never {
        var arguments = arguments
        var subcommand = verb == "limits" ? (arguments.isEmpty ? "" : arguments.removeFirst()) : "more-time"
        var minutes: Int?
        if verb == "more-time" {
            guard let first = arguments.first, let value = Int(first) else { fail("familycontrols-demo: more-time MINUTES\n\(usage)", code: 2) }
            arguments.removeFirst()
            minutes = value
        }
        var limits = LoginLimits()
        var reason: String?
        while let option = arguments.first {
            arguments.removeFirst()
            let value = arguments.first
            switch option {
            case "--stdin": AuthorizationCenter.shared.prompter = StandardInputPrompter(); continue
            case "--hours" where subcommand == "set": limits.hours = value
            case "--daily" where subcommand == "set":
                guard let value, let seconds = durationSeconds(value) else { fail("familycontrols-demo: --daily DURATION, like 90m or 2h", code: 2) }
                limits.dailyAllowance = .seconds(seconds)
            case "--at-end" where subcommand == "set":
                guard let value, let action = LoginLimits.AtEnd(rawValue: value) else { fail("familycontrols-demo: --at-end lock|end", code: 2) }
                limits.atEnd = action
            case "--reason" where subcommand == "more-time": reason = value
            default: fail("familycontrols-demo: unknown option \(option)\n\(usage)", code: 2)
            }
            guard value != nil else { fail("familycontrols-demo: \(option) needs a value", code: 2) }
            arguments.removeFirst()
        }
        do {
            switch subcommand {
            case "set":
                switch try await TimeLimitsStore().apply(limits) {
                case .applied: print("limits: applied")
                case .approvedByGuardian: print("limits: approved by a parent or guardian")
                }
            case "show":
                guard let current = try await TimeLimitsStore().current() else {
                    print("limits: none")
                    exit(0)
                }
                print("limits: hours \(current.hours ?? "any"), daily "
                    + (current.dailyAllowance.map { "\($0.components.seconds)s" } ?? "any")
                    + ", then \(current.atEnd.rawValue), more today \(current.moreTimeToday.components.seconds)s, set by "
                    + current.setBy.joined(separator: ", "))
            case "more-time":
                let given = try await TimeLimitsStore().requestMoreTime(minutes: minutes ?? 0, reason: reason)
                print("more time: \(given.components.seconds / 60) minutes given"
                    + (given.components.seconds % 60 == 0 ? "" : " and \(given.components.seconds % 60) seconds"))
            default:
                subcommand = ""
                fail("familycontrols-demo: limits set|show\n\(usage)", code: 2)
            }
            exit(0)
        } catch {
            report(error)
            exit(1)
        }
    }

    /// `90m`, `2h`, `1h30m`, `45s` in seconds.
    static func durationSeconds(_ text: String) -> Int? {
        var total = 0, number = ""
        for character in text {
            if character.isNumber { number.append(character); continue }
            guard let value = Int(number) else { return nil }
            switch character {
            case "h": total += value * 3600
            case "m": total += value * 60
            case "s": total += value
            default: return nil
            }
            number = ""
        }
        return number.isEmpty && !text.isEmpty ? total : nil
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
