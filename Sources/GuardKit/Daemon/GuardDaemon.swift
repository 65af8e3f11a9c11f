#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Varlink
import VarlinkServerKit
import FamilyControlsModel
import FamilyConfiguration
import PAM
import GuardDiagnostics
import GuardFlatpak
import GuardIdentity
import GuardPolicy
import GuardSessions
import GuardStore
import GuardTime

/// `familycontrolsd`, the Guard: parses its flags, loads the configuration,
/// opens the store, reconciles locks, and serves the Varlink socket until
/// SIGTERM or SIGINT; SIGHUP reloads the configuration.
package enum GuardDaemon {
    package static let usage = """
        usage: familycontrolsd [--config FILE] [--socket PATH] [--state-dir DIR] [--pam-dir DIR]
               familycontrolsd --check-config [--configuration-only] [--config FILE] [--pam-dir DIR] [--state-dir DIR]

        The FamilyControls Guard. Runs in the foreground and logs to standard error.

          --check-config    check the configuration and exit: 0 when it may be used
                            (warnings are printed), 3 when it is invalid or unsafe,
                            or when a child can become root or a guardian or change
                            the Guard (a sudo group, sudoers, doas, a setuid or
                            capability program, a shared uid, files it may write)
          --configuration-only
                            with --check-config: check the configuration and its
                            PAM services only, not what the children can do (the
                            Guard logs that and serves on; the unit uses this)
          --config FILE     configuration (default \(GuardConfiguration.defaultPath))
          --socket PATH     Varlink socket (default \(defaultSocket))
          --state-dir DIR   store folder (default \(defaultStateDirectory))
          --pam-dir DIR     read PAM services from DIR instead of /etc/pam.d
          -h, --help        show this help
          --version         show the version

        Signals: SIGHUP reloads the configuration; SIGTERM and SIGINT stop the Guard.
        See familycontrolsd(8).
        """
    package static let defaultSocket = GuardEndpoint.defaultSocket
    package static let defaultStateDirectory = GuardStateDirectory.standard

    /// Runs the Guard; returns the exit status.
    package static func main(_ tokens: [String]) -> Int32 {
        // The Guard started again as its own PAM helper, one transaction long.
        if tokens.first == PAMHelper.modeArgument { return PAMHelper.main(Array(tokens.dropFirst())) }
        // Or as the child, in their session, to post one desktop notification (a warning of time running out).
        if tokens.first == DesktopNotification.modeArgument { return DesktopNotification.main(Array(tokens.dropFirst())) }
        // Or as a helper for one step of a Flatpak app's move into the Guard's installation.
        if let mode = tokens.first, FlatpakMoveCommand.modes.contains(mode) {
            return FlatpakMoveCommand.main(mode: mode, Array(tokens.dropFirst()))
        }
        // Before any thread starts, so every thread inherits the mask and only
        // the main thread's sigwait sees these signals.
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGHUP, SIGTERM, SIGINT] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        // Kept pending for the monitors' thread, which learns of a stopped monitor from it.
        ChildSignal.block()
        signal(SIGPIPE, SIG_IGN)

        let logger = Logger(label: "familycontrolsd")
        func fail(_ code: ExitCode, _ message: String) -> Int32 {
            // Under systemd, as an error: `journalctl -p err` shows why the Guard did not start.
            writeToStandardError("\(Logger.writesToJournal ? "<3>" : "")familycontrolsd: \(message)\n")
            return code.rawValue
        }
        let arguments: Arguments
        do throws(UsageError) {
            arguments = try Arguments(tokens, .init(valued: ["--config", "--socket", "--state-dir", "--pam-dir"],
                                                     flags: ["--help", "-h", "--version", "--check-config", "--configuration-only"]))
        } catch {
            return fail(.usage, "\(error)\nTry 'familycontrolsd --help'.")
        }
        if arguments.has("--help") || arguments.has("-h") { print(usage); return 0 }
        if arguments.has("--version") { print("familycontrolsd \(FamilyControlsVersion.string)"); return 0 }
        guard arguments.operands.isEmpty else {
            return fail(.usage, "unexpected argument \"\(arguments.operands[0].clipped)\"\nTry 'familycontrolsd --help'.")
        }
        if arguments.has("--configuration-only") && !arguments.has("--check-config") {
            return fail(.usage, "--configuration-only goes with --check-config\nTry 'familycontrolsd --help'.")
        }
        if arguments.has("--check-config") {
            return checkConfiguration(path: arguments["--config"] ?? GuardConfiguration.defaultPath,
                                      pamDirectory: arguments["--pam-dir"],
                                      stateDirectory: arguments["--state-dir"] ?? defaultStateDirectory,
                                      children: !arguments.has("--configuration-only"))
        }
        guard geteuid() == 0 else {
            return fail(.permission, "must be run as root: the Guard authenticates through PAM and locks app folders")
        }
        keepSecretsOutOfCoreDumps(logger: logger)
        let configPath = arguments["--config"] ?? GuardConfiguration.defaultPath
        let socketPath = arguments["--socket"] ?? defaultSocket
        let stateDirectory = arguments["--state-dir"] ?? defaultStateDirectory

        let configuration: GuardConfiguration
        do throws(ConfigError) {
            configuration = try GuardConfiguration.load(path: configPath)
        } catch {
            return fail(.configuration, "invalid configuration: \(error)")
        }
        if access(configPath, F_OK) != 0 {
            logger.notice("no \(configPath); running on the embedded defaults (no family configured yet)")
        }

        // Before touching the store: a second Guard must not reconcile behind the first one's back.
        if !socketActivated && VarlinkServer.probeSocket(at: socketPath) == .live {
            return fail(.failure, "another Guard already answers on \(socketPath)")
        }
        let findings = ConfigurationCheck.findings(path: configPath, configuration: configuration,
                                                   pamDirectory: arguments["--pam-dir"])
        for finding in findings where finding.severity == .warning { logger.warning("\(finding)") }
        if ConfigurationCheck.refuses(findings) {
            for finding in findings where finding.severity == .refused { logger.error("\(finding)") }
            return fail(.configuration, "unsafe configuration refused; see familycontrolsd --check-config")
        }
        let store: Store
        do throws(StoreError) {
            store = try Store.open(directory: stateDirectory)
        } catch {
            return fail(.failure, "cannot open the store in \(stateDirectory): \(error)")
        }
        let policy: AuthorizationPolicy
        let service: GuardService
        do {
            policy = try AuthorizationPolicy(
                store: store, configuration: configuration, locker: LockEngineLocker(journal: store, logger: logger),
                settings: .init(pamDirectory: arguments["--pam-dir"], stateDirectory: stateDirectory), logger: logger)
            service = try GuardService(policy: policy, logger: logger)
        } catch {
            return fail(.failure, "cannot start: \(error)")
        }
        func checkChildren(_ configuration: GuardConfiguration) {
            let report = ChildPrivilegeCheck.report(configPath: configPath, configuration: configuration,
                                                    pamDirectory: arguments["--pam-dir"], stateDirectory: stateDirectory)
            // Logged, not refused: the locks still hold everyone else, and the
            // fix is the child's groups or files, not the configuration.
            for finding in report.findings { logger.log(finding.severity == .refused ? .error : .warning, "\(finding)") }
            policy.standingWarnings.replace(with: report.statusWarnings)
        }
        checkChildren(configuration)
        // Before serving: the Guard that answers has its monitors' thread.
        let enforcer = SessionEnforcer(limits: policy.limits, logger: logger)
        // Monitors and time limits ask the same rules, which the one enforcer carries out.
        let rules = SessionRules(enforcer: enforcer, limits: policy.limits)
        var logind: LogindSessions?
        do throws(Errno) {
            logind = try service.startMonitors(socketPath: socketPath, stateDirectory: stateDirectory, enforcer: rules)
        } catch {
            logger.error("monitor: cannot start the monitors' keeper (\(error)); no approved app's monitor runs")
            logind = LogindSessions()
        }
        service.startTimeKeeper(store: store, stateDirectory: stateDirectory, enforcer: rules, logind: logind)
        let server: VarlinkServer
        switch makeServer(socketPath: socketPath, service: service, logger: logger) {
        case .success(let made): server = made
        case .failure(let message):
            service.monitors.stopAll()
            service.time.stop()
            return fail(.failure, message)
        }
        logger.notice("familycontrolsd \(FamilyControlsVersion.string) serving \(server.path ?? "a socket from systemd") "
            + "(store \(store.path), config \(configPath))")
        notifySystemd("READY=1")
        // Beside serving, not before it: a child who filled an app with entries
        // must not keep everyone else from being answered. Each app is checked
        // under its own turn, so requests and reconcile never undo each other.
        // Then the code only start-up ran is let go of.
        let startUpEnds: @Sendable () -> Void = {
            policy.reconcile()
            releaseStartUpPages(logger: logger)
        }
        do throws(BlockingExecutor.Saturated) {
            try service.work.submit(startUpEnds)
        } catch {
            logger.error("reconcile: \(error); reconciling before serving more")
            startUpEnds()
        }
        do throws(Errno) {
            try PeriodicLockCheck.start(policy: policy)
        } catch {
            logger.error("verify: cannot start the periodic lock check (\(error)); locks are checked only at start "
                + "and on `familyctl locks verify`")
        }

        while true {
            var received: CInt = 0
            guard sigwait(&signals, &received) == 0 else { continue }
            if received == SIGHUP {
                do throws(ConfigError) {
                    let reloaded = try GuardConfiguration.load(path: configPath)
                    let findings = ConfigurationCheck.findings(path: configPath, configuration: reloaded,
                                                               pamDirectory: arguments["--pam-dir"])
                    for finding in findings { logger.log(finding.severity == .refused ? .error : .warning, "\(finding)") }
                    if ConfigurationCheck.refuses(findings) {
                        logger.error("reload refused, keeping the previous configuration: the new one is unsafe")
                    } else {
                        policy.reload(reloaded)
                        service.time.wake()
                        // The children checked first: once the log says reloaded, root's status says what it found.
                        checkChildren(reloaded)
                        logger.notice("reloaded \(configPath)")
                    }
                } catch {
                    logger.error("reload refused, keeping the previous configuration: \(error)")
                }
                continue
            }
            logger.notice("stopping on \(received == SIGTERM ? "SIGTERM" : "SIGINT")")
            notifySystemd("STOPPING=1")
            service.monitors.stopAll()
            service.time.stop()
            enforcer.stop()
            server.shutdown()
            return 0
        }
    }

    /// The code and read-only data that only start-up ran stay mapped from
    /// start-up on; an idle Guard keeps resident only what it goes on running.
    private static func releaseStartUpPages(logger: Logger) {
        // Said before, not after: the log line's own code (formatting, the
        // clock, the journal) would otherwise map straight back in.
        logger.info("letting go of \(MappedFilePages.releasable / 1024) kB of code and constants only start-up ran")
        do throws(Errno) {
            try MappedFilePages.release()
        } catch {
            logger.warning("cannot let go of the start-up's pages: \(error)")
        }
    }

    /// Passwords pass through the Guard's memory on their way to PAM: a crash
    /// must not write them to a core file.
    private static func keepSecretsOutOfCoreDumps(logger: Logger) {
        do throws(Errno) {
            try CoreDumps.disable()
        } catch {
            logger.warning("cannot turn core dumps off: \(error)")
        }
    }

    /// Whether systemd passed the listening socket (`LISTEN_PID`, `LISTEN_FDS`, fd 3).
    private static var socketActivated: Bool {
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        return variable("LISTEN_PID") == String(getpid()) && variable("LISTEN_FDS") == "1"
    }

    private enum Made { case success(VarlinkServer), failure(String) }

    /// `--check-config`: prints every finding, then a summary; 0 when the
    /// configuration may be used, 3 when it is invalid or unsafe. With
    /// `children`, also every way a child could become someone else.
    private static func checkConfiguration(path: String, pamDirectory: String?, stateDirectory: String,
                                           children: Bool) -> Int32 {
        let configuration: GuardConfiguration
        do throws(ConfigError) {
            configuration = try GuardConfiguration.load(path: path)
        } catch {
            writeToStandardError("\(error.line > 0 ? "\(error.file):\(error.line)" : error.file): refused: \(error.message)\n")
            writeToStandardError("familycontrolsd: \(path): invalid\n")
            return ExitCode.configuration.rawValue
        }
        var findings = ConfigurationCheck.findings(path: path, configuration: configuration, pamDirectory: pamDirectory)
        if children {
            findings += ChildPrivilegeCheck.report(configPath: path, configuration: configuration, pamDirectory: pamDirectory,
                                                   stateDirectory: access(stateDirectory, F_OK) == 0 ? stateDirectory : nil).findings
        }
        let limited = childrenWithTimeLimits(stateDirectory: stateDirectory)
        findings += limited.findings + MalcontentSessionLimits.findings(children: limited.children)
        for finding in findings { writeToStandardError("\(finding)\n") }
        let refused = findings.filter { $0.severity == .refused }.count
        let warnings = findings.count - refused
        func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
        let dropIns = (try? GuardConfiguration.dropIns(of: path).count) ?? 0
        let source = (access(path, F_OK) == 0 ? path : "\(path) (absent: the embedded defaults)")
            + (dropIns == 0 ? "" : " with \(count(dropIns, "drop-in")) in \(GuardConfiguration.dropInFolder(of: path))")
        if refused > 0 {
            writeToStandardError("familycontrolsd: \(source): refused (\(count(refused, "problem")), \(count(warnings, "warning")))\n")
            return ExitCode.configuration.rawValue
        }
        print("familycontrolsd: \(source): OK" + (warnings > 0 ? " (\(count(warnings, "warning")))" : ""))
        return 0
    }

    /// The children apps set time limits for, from the store in
    /// `stateDirectory` when there is one (none when there is not, or when it
    /// predates time limits), read without writing to it: a running Guard's
    /// store is never migrated by a check. A store that cannot be read is a
    /// warning of its own, never "no limits".
    private static func childrenWithTimeLimits(stateDirectory: String) -> (children: [String], findings: [ConfigurationFinding]) {
        let path = stateDirectory + "/familycontrols.db"
        do throws(StoreError) {
            guard let (store, version) = try Store.openForReading(directory: stateDirectory),
                  version >= StoreSchema.timeLimitsVersion else { return ([], []) }
            let records = try store.timeLimits()
            return (Array(Set(records.map(\.user))), [])
        } catch {
            return ([], [ConfigurationFinding(severity: .warning, file: path, line: 0,
                                              message: "cannot read the time limits apps set (\(error)); "
                                                  + "not checked against GNOME parental controls' session limits")])
        }
    }

    /// Adopts systemd's socket when there is one; otherwise creates the socket,
    /// replacing a stale file only when no one answers on it.
    private static func makeServer(socketPath: String, service: GuardService, logger: Logger) -> Made {
        var configuration = VarlinkServerConfiguration(
            vendor: "FamilyControls for Linux", product: "familycontrolsd",
            version: FamilyControlsVersion.string, url: "https://familycontrols.invalid/")
        configuration.logger = Logger(label: "varlink")
        // Calls to the Guard are small; a smaller frame bound caps what thousands
        // of hostile half-sent frames can cost.
        configuration.maximumFrameSize = 64 << 10
        // An app holds one or two connections; a child opening thousands must
        // not crowd out other users or the administrator (root is exempt).
        configuration.maximumConnectionsPerUser = service.policy.limits.connectionsPerUser
        // An app has a call or two in flight; a client that pipelines thousands
        // waits with them in its own socket buffer, not in the Guard's memory.
        configuration.maximumPendingCallsPerConnection = service.policy.limits.pendingCallsPerConnection
        // Passwords arrive as bytes, and what carried them is zeroed.
        configuration.secretParameters = GuardService.secretParameters
        // Quiet for a while, the Guard lets go of the code it ran again: it
        // comes back from the page cache with the next call. A failure was
        // said once, at start-up.
        configuration.whenQuiet = .init(after: service.policy.limits.codeLetGoWhenQuietFor) {
            _ = try? MappedFilePages.release()
        }
        do throws(VarlinkServerError) {
            if socketActivated {
                return .success(try VarlinkServer(adoptingListener: 3, configuration: configuration, service: service))
            }
            switch VarlinkServer.probeSocket(at: socketPath) {
            case .live:
                return .failure("another Guard already answers on \(socketPath)")
            case .stale:
                logger.notice("removing stale socket \(socketPath)")
                unlink(socketPath)
            case .notASocket:
                return .failure("\(socketPath) exists and is not a socket; remove it or choose --socket")
            case .unknown(let error):
                return .failure("cannot check \(socketPath): \(error)")
            case .absent:
                break
            }
            let directory = socketPath.lastIndex(of: "/").map { String(socketPath[..<$0]) } ?? ""
            if !directory.isEmpty && access(directory, F_OK) != 0 {
                // Each missing folder on the way, as `mkdir -p -m 0755` would make it.
                var path = ""
                for component in directory.split(separator: "/") {
                    path += "/" + component
                    if mkdir(path, 0o755) == 0 { chmod(path, 0o755) }
                }
            }
            return .success(try VarlinkServer(listeningOn: socketPath, mode: 0o666, configuration: configuration, service: service))
        } catch {
            return .failure("cannot serve on \(socketPath): \(error)")
        }
    }

    /// `sd_notify(3)` without libsystemd: one datagram to `$NOTIFY_SOCKET`.
    private static func notifySystemd(_ state: String) {
        guard let variable = getenv("NOTIFY_SOCKET") else { return }
        let path = String(cString: variable)
        guard !path.isEmpty else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                Array(state.utf8).withUnsafeBytes { payload in
                    sendto(fd, payload.baseAddress, payload.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
    }
}
