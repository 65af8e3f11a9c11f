// familyctl: the administrator's command for FamilyControls. See familyctl(8).
import FamilyCtl
#if canImport(Glibc)
import Glibc
#endif

exit(FamilyCtl.main(Array(CommandLine.arguments.dropFirst())))
