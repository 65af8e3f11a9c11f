// familycontrols-inspect: reads, for the Guard, bytes a child or a remote
// wrote, and answers what they say, typed (Config/org.familycontrols.inspect.varlink).
// The Guard starts it for one call (the one argument), as an unprivileged
// user without capabilities, with the file on standard input and the answer
// expected on standard output. See familycontrolsd(8), "The inspector".
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

exit(Inspection.main(Array(CommandLine.arguments.dropFirst())))
