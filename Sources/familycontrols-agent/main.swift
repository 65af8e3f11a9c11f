// familycontrols-agent: the verbs of familyctl that need libraries familyctl
// itself does not load (`agent`: sd-bus; `code enroll`: libqrencode), which
// familyctl becomes (the same process, the same arguments). It takes
// familyctl's command line. See familyctl(8).
import FamilyCtl
import FamilyCtlDesktop
#if canImport(Glibc)
import Glibc
#endif

exit(FamilyCtl.main(Array(CommandLine.arguments.dropFirst()), desktop: DesktopLibraries(
    openNotificationServer: { () throws(NotificationServerUnavailable) -> any NotificationServer in try DesktopNotifier() },
    drawQRCode: { text in QRCode(text)?.terminalText() })))
