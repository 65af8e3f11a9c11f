/* CSystem: the command line, for the Swift runtime's CommandLine.arguments.
 *
 * Linked statically (Config/build.sh), the runtime would find argv with a
 * static initializer of its own that reads and parses /proc/self/maps, at
 * every start of every program, to locate the process's stack and walk
 * back from `environ`: about 6% of `familyctl --version` (perf), which
 * runs for one line. glibc hands argc and argv to every .init_array
 * function, so they are kept here, and this definition of the runtime's
 * `_swift_stdlib_getUnsafeArgvArgc` (an object file, linked before the
 * runtime's archive) keeps the linker from taking the runtime's
 * (CommandLine.cpp.o of libswiftCore.a) at all. Against the shared runtime
 * (debug builds, tests) the runtime's own hidden copy answers and this one
 * is unused. StaticLinkTests checks the programs carry no such reader. */
#include "csystem_private.h"

#ifdef __linux__

static int csystem_argc;
static char **csystem_argv;
static char *csystem_no_arguments[] = { NULL };

static void csystem_keep_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argv != NULL && argc >= 0) {
        csystem_argc = argc;
        csystem_argv = argv;
    }
}

__attribute__((section(".init_array"), used))
static void (*const csystem_keep_arguments_entry)(int, char **, char **) = csystem_keep_arguments;

/* The runtime's call (stdlib/public/CommandLineSupport): argv, argc through
 * `count`; declared in the runtime's calling convention (swiftcall). */
__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *count);

__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *count) {
    if (csystem_argv == NULL) {
        *count = 0;
        return csystem_no_arguments;
    }
    *count = csystem_argc;
    return csystem_argv;
}

#endif
