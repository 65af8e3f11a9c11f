// familycontrols-bench: prints speed figures as ratios against a baseline
// measured in the same run. Not a test: these machines are noisy.
#if canImport(Glibc)
import Glibc
import SystemKit
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: familycontrols-bench socket [options]   Varlink round trip vs a bare Unix-socket round trip
           familycontrols-bench guard [options]    the real Guard's status call vs the same floor, and its memory
           familycontrols-bench lock [options]     lock/unlock vs chown -R + chattr -R, and a lock
                                                   with every file open for writing vs one with none;
                                                   with --flatpak-sized, a 50,000-file app's lock vs
                                                   chattr -R +i and its update vs chattr -R +i NEW + -i OLD
           familycontrols-bench anchors [--runs N] familyctl vs pkcheck and pamtester, the Guard's memory vs polkitd's
           familycontrols-bench startup [--runs N] BASELINE_DIR OTHER_DIR...
                                                   familyctl --help time and the idle Guard's memory,
                                                   build against build (Swift runtime linked in or not)
           familycontrols-bench monitor [--runs N] a killed monitor's restart to its first line vs starting it directly;
                                                   a required monitor's kill loop to its session's end vs ending it directly
           familycontrols-bench identify [--runs N] an app's identification with the inspector as its own process
                                                   vs the same reading in this process
           familycontrols-bench account [--runs N] [--module PATH]
                                                   a login's PAM account phase (pamtester) with pam_familycontrols.so
                                                   vs the same stack without it, for a child with limits and a non-child
    """
switch arguments.first {
case "socket":
    exit(runSocketBenchmark(Array(arguments.dropFirst())))
case "echo-server":
    exit(runEchoServer(Array(arguments.dropFirst())))
case "hold-writers":
    exit(runWriterHolder(Array(arguments.dropFirst())))
case "guard":
    exit(runGuardBenchmark(Array(arguments.dropFirst())))
case "anchors":
    exit(runAnchorBenchmark(Array(arguments.dropFirst())))
case "lock":
    exit(runLockBenchmark(Array(arguments.dropFirst())))
case "startup":
    exit(runStartupBenchmark(Array(arguments.dropFirst())))
case "monitor":
    exit(runMonitorBenchmark(Array(arguments.dropFirst())))
case "identify":
    exit(runIdentifyBenchmark(Array(arguments.dropFirst())))
case "account":
    exit(runAccountBenchmark(Array(arguments.dropFirst())))
case "-h", "--help":
    print(usage)
default:
    writeToStandardError(usage + "\n")
    exit(64)
}
