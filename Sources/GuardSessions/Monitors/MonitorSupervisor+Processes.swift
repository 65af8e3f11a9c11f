#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import LockEngine
import SystemKit

extension MonitorKeeper.Supervisor {
    // MARK: Starting, checking and stopping monitors

    func start(_ instance: Instance, first: Bool) {
        let key = instance.key, launch = instance.launch
        instance.restartDue = nil
        instance.snapshot.restartAt = nil
        let now = MonotonicInstant.now
        instance.starts = instance.starts.filter { now < $0.advanced(by: .seconds(60)) } + [now]
        do throws(MonitorStartError) {
            let (process, output) = try spawn(instance)
            instance.process = process
            instance.output = output
            instance.pending = []
            instance.startedAt = now
            instance.snapshot.state = .running
            instance.snapshot.pid = process.pid
            instance.snapshot.startedAt = .now
            // Known before its first instruction: `IdentifyMonitor` answers it from then on.
            publish(held: [instance.key])
            do throws(UserProcess.SpawnError) {
                try process.release()
            } catch {
                instance.process = nil
                instance.output = nil
                throw .spawn(error.description)
            }
            if first {
                context.logger.notice("monitor: started \(key.appID) for \(key.user) in session \(key.session) "
                    + "as pid \(process.pid)")
                context.audit("started", key.user, key.appID,
                              "monitor of \(key.appID) for \(key.user) started in session \(key.session)")
            }
        } catch {
            context.logger.error("monitor: cannot start \(launch.appID) for \(key.user) in session \(key.session): \(error)")
            context.audit("failed", key.user, key.appID,
                          "monitor of \(key.appID) for \(key.user) could not start: \(error)")
            ended(instance, how: "could not start", startFailed: true)
        }
        writeRecord()
    }

    func spawn(_ instance: Instance) throws(MonitorStartError) -> (UserProcess, FileDescriptor) {
        let session = instance.session.session
        guard let account = try? UserDatabase.user(named: session.user), account.uid == session.uid else {
            throw .noAccount(session.user)
        }
        let ends: (read: FileDescriptor, write: FileDescriptor)
        do throws(Errno) {
            ends = try FileDescriptor.pipe()
        } catch {
            throw .spawn("pipe: \(error)")
        }
        _ = fcntl(ends.read.rawValue, F_SETFL, fcntl(ends.read.rawValue, F_GETFL) | O_NONBLOCK)
        let launch = instance.launch
        instance.sandboxShown = false
        instance.refusal = nil
        instance.sandboxFiles = try launch.sandbox?.approvedFiles()
        // An app root's monitor: the approved folder's own program, by descriptor.
        var program: FileDescriptor?, folder: OpenedDirectory?
        if let identity = launch.folder, let relative = launch.program {
            guard let held = folders["\(instance.key.user)/\(instance.key.appID)"], held.identity == identity,
                  let opened = held.openProgram(relative) else {
                throw .spawn("its program \(DisplayText.sanitized(relative).clipped) is no longer in the approved folder")
            }
            program = opened
            folder = held
        }
        do throws(UserProcess.SpawnError) {
            let process = try UserProcess.spawn(
                launch.path, program: program?.rawValue, arguments: launch.arguments,
                environment: environment(instance, account),
                directory: launch.directory ?? account.home, directoryDescriptor: folder?.rawDescriptor,
                uid: account.uid, gid: account.gid,
                realGID: launch.isFlatpak || noGroup == account.gid ? account.gid : noGroup,
                groups: UserDatabase.groupIDs(of: account), output: ends.write.rawValue)
            ends.write.close()
            return (process, ends.read)
        } catch {
            throw .spawn(error.description)
        }
    }

    /// A clean environment: the account's, the session's, and the monitor's own.
    func environment(_ instance: Instance, _ account: UserAccount) -> [String] {
        let session = instance.session.session
        var environment = [
            "HOME=\(account.home)", "USER=\(account.name)", "LOGNAME=\(account.name)",
            "SHELL=\(account.shell.isEmpty ? "/bin/sh" : account.shell)",
            "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
            "FAMILYCONTROLS_MONITOR=\(instance.key.appID)", "FAMILYCONTROLS_MONITOR_SESSION=\(instance.key.session)",
            "\(GuardEndpoint.socketVariable)=\(context.socketPath)",
        ]
        let runtime = session.runtimeDirectory ?? "/run/user/\(account.uid)"
        var info = stat()
        let hasRuntime = stat(runtime, &info) == 0 && info.st_uid == account.uid
        if hasRuntime { environment.append("XDG_RUNTIME_DIR=\(runtime)") }
        if let bus = session.bus {
            environment.append("DBUS_SESSION_BUS_ADDRESS=\(bus)")
        } else if hasRuntime, stat(runtime + "/bus", &info) == 0, info.st_mode & S_IFMT == S_IFSOCK {
            environment.append("DBUS_SESSION_BUS_ADDRESS=unix:path=\(runtime)/bus")
        }
        if let display = session.display { environment.append("DISPLAY=\(display)") }
        if let wayland = session.waylandDisplay { environment.append("WAYLAND_DISPLAY=\(wayland)") }
        if let id = session.sessionID { environment.append("XDG_SESSION_ID=\(id)") }
        return environment.filter { !$0.utf8.contains(0) }
    }

    /// Stops `instance` for good: `SIGTERM` now, `SIGKILL` after ``stopGrace``.
    func stop(_ instance: Instance, because reason: String) {
        instances[instance.key] = nil
        let key = instance.key
        context.logger.notice("monitor: stopping \(key.appID) for \(key.user) in session \(key.session): \(reason)")
        context.audit("stopped", key.user, key.appID,
                      "monitor of \(key.appID) for \(key.user) stopped in session \(key.session): \(reason)")
        guard let process = instance.process else { return }
        process.send(SIGTERM)
        // A stopped process acts on SIGTERM only once continued.
        process.send(SIGCONT)
        instance.killAt = MonotonicInstant.now.advanced(by: Self.stopGrace)
        instance.stopReason = reason
        leaving.append(instance)
    }

    func stopEverything() {
        for instance in Array(instances.values) { stop(instance, because: "the Guard is stopping") }
        let deadline = MonotonicInstant.now.advanced(by: Self.stopGrace)
        while !leaving.isEmpty, MonotonicInstant.now < deadline {
            SystemThread.sleep(for: .milliseconds(20))
            leaving.removeAll { instance in
                drain(instance)
                if case .exited? = instance.process?.poll() {}
                return instance.process?.exit != nil
            }
        }
        for instance in leaving { instance.process?.send(SIGKILL) }
        leaving.removeAll()
        publish()
        writeRecord()
    }


    /// Whether a started Flatpak monitor's sandbox runs the approved
    /// deployment: killed, as not the approved app, when a sandbox of
    /// another shows, or none within ``FlatpakMonitorSandbox/showWithin``.
    func checkSandbox(_ instance: Instance) {
        guard let process = instance.process, process.exit == nil, instance.refusal == nil,
              let files = instance.sandboxFiles else { return }
        let key = instance.key
        switch FlatpakMonitorSandbox.judge(descendantsOf: process.pid, files: files) {
        case .approved:
            instance.sandboxShown = true
            context.logger.info("monitor: \(key.appID) for \(key.user) in session \(key.session) runs in a sandbox "
                + "of the approved deployment")
            return
        case .another(let identity):
            instance.refusal = "its sandbox's /app is \(identity), not the approved deployment's files (\(files))"
        case .notSandboxed:
            guard !(MonotonicInstant.now < instance.startedAt.advanced(by: FlatpakMonitorSandbox.showWithin)) else { return }
            instance.refusal = "no sandbox of the approved deployment within \(Self.spoken(Self.seconds(FlatpakMonitorSandbox.showWithin)))"
        }
        context.logger.warning("monitor: \(key.appID) for \(key.user) in session \(key.session) is killed: "
            + (instance.refusal ?? ""))
        process.send(SIGKILL)
    }
}
