// familycontrols-bench: prints speed figures as ratios against a baseline
// measured in the same run. Not a test: these machines are noisy.
#if canImport(Glibc)
import Glibc
import SystemKit
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: familycontrols-bench socket [options]   Guard status round trip vs a bare Unix-socket round trip
           familycontrols-bench lock [options]     lock/unlock vs chown -R + chattr -R
    """
switch arguments.first {
case "socket":
    exit(runSocketBenchmark(Array(arguments.dropFirst())))
case "lock":
    exit(runLockBenchmark(Array(arguments.dropFirst())))
case "-h", "--help":
    print(usage)
default:
    writeToStandardError(usage + "\n")
    exit(64)
}
