// familycontrols-agent: `familyctl agent`, which familyctl becomes (the same
// process, the same arguments) so that familyctl itself does not load
// libsystemd. It takes familyctl's command line. See familyctl(8).
import FamilyCtl
#if canImport(Glibc)
import Glibc
#endif

exit(FamilyCtl.main(Array(CommandLine.arguments.dropFirst())) { () throws(NotificationServerUnavailable) -> any NotificationServer in
    try DesktopNotifier()
})
