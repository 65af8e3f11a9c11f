// familycontrolsd: the FamilyControls Guard. See familycontrolsd(8).
import GuardKit
#if canImport(Glibc)
import Glibc
#endif

exit(GuardDaemon.main(Array(CommandLine.arguments.dropFirst())))
