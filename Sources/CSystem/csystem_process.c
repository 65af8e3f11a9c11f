/* CSystem: processes and threads. */
#include "csystem_private.h"

#ifdef __linux__

/* MARK: Processes and threads */

int csystem_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int csystem_pidfd_open(int pid, unsigned int flags) {
#ifdef CSYSTEM_RAW_PIDFD
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, flags);
#else
    return pidfd_open((pid_t)pid, flags);
#endif
}

int csystem_pidfd_send_signal(int pidfd, int signal, unsigned int flags) {
#ifdef CSYSTEM_RAW_PIDFD
    return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, flags);
#else
    return pidfd_send_signal(pidfd, signal, NULL, flags);
#endif
}

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* In a forked child before its exec: every signal to its default action,
   none blocked. */
static int csystem_plain_signals(void) {
    struct sigaction plain;
    memset(&plain, 0, sizeof plain);
    plain.sa_handler = SIG_DFL;
    for (int signal = 1; signal < NSIG; signal++) (void)sigaction(signal, &plain, NULL);
    sigset_t empty;
    sigemptyset(&empty);
    return sigprocmask(SIG_SETMASK, &empty, NULL);
}

/* The child's side of csystem_spawn_helper: system calls only (it was
   forked from a process that may have other threads), then the exec; on
   failure errno goes down `report` and it exits. */
static void csystem_become_helper(const char *path, char *const argv[], char *const envp[], int keep, int parent,
                                  int report) {
    if (csystem_plain_signals() != 0) goto fail;
    /* Killed with the thread that started it; if that already ended, never run. */
    if (prctl(PR_SET_PDEATHSIG, (unsigned long)SIGKILL, 0UL, 0UL, 0UL) != 0) goto fail;
    if (getppid() != (pid_t)parent) _exit(127);
    if (keep == 3) {
        if (fcntl(3, F_SETFD, 0) != 0) goto fail;
    } else if (dup2(keep, 3) < 0) {
        goto fail;
    }
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) goto fail;
    if (dup2(null, 0) < 0 || dup2(null, 1) < 0) goto fail;
    /* Everything above 3 closes at exec, `report` with it. */
    if (syscall(SYS_close_range, 4U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
        for (int fd = 4; fd < 65536; fd++) if (fd != report) (void)close(fd);
    }
    execve(path, argv, envp);
fail:;
    int failure = errno;
    (void)!write(report, &failure, sizeof failure);
    _exit(127);
}

int csystem_spawn_helper(const char *path, char *const argv[], char *const envp[], int keep, int *pid) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return errno;
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        close(report[0]);
        csystem_become_helper(path, argv, envp, keep, (int)parent, report[1]);
    }
    int saved = errno;
    close(report[1]);
    if (child < 0) {
        close(report[0]);
        return saved;
    }
    /* The exec closes the report's end: nothing read means it ran. */
    int failure = 0;
    ssize_t got;
    do { got = read(report[0], &failure, sizeof failure); } while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == (ssize_t)sizeof failure) {
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        return failure != 0 ? failure : ECHILD;
    }
    *pid = (int)child;
    return 0;
}

/* Descriptors 0-2 of the child are `input`, `output` and `error`, whatever
   numbers they have here; dup2 onto the same number would leave close-on-exec
   set, so each is first copied above 2. */
int csystem_spawn_connected(const char *file, char *const argv[], char *const envp[],
                            int input, int output, int error, int *pid) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
    int sources[3] = { -1, -1, -1 };
    int wanted[3] = { input, output, error };
    int result = 0;
    for (int i = 0; i < 3; i++) {
        sources[i] = fcntl(wanted[i], F_DUPFD_CLOEXEC, 3);
        if (sources[i] < 0) { result = errno; goto close_sources; }
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    result = posix_spawn_file_actions_init(&actions);
    if (result != 0) goto close_sources;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) goto destroy_actions;
    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    if ((result = posix_spawn_file_actions_adddup2(&actions, sources[0], 0)) != 0
        || (result = posix_spawn_file_actions_adddup2(&actions, sources[1], 1)) != 0
        || (result = posix_spawn_file_actions_adddup2(&actions, sources[2], 2)) != 0
        || (result = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) != 0
        || (result = posix_spawnattr_setsigmask(&attributes, &empty)) != 0
        || (result = posix_spawnattr_setsigdefault(&attributes, &all)) != 0
        || (result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0) {
        goto destroy_attributes;
    }
    pid_t child = 0;
    result = posix_spawnp(&child, file, &actions, &attributes, argv, envp);
    if (result == 0) *pid = (int)child;
destroy_attributes:
    posix_spawnattr_destroy(&attributes);
destroy_actions:
    posix_spawn_file_actions_destroy(&actions);
close_sources:
    for (int i = 0; i < 3; i++) if (sources[i] >= 0) close(sources[i]);
    return result;
#else
    (void)file; (void)argv; (void)envp; (void)input; (void)output; (void)error; (void)pid;
    return ENOSYS;
#endif
}

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

const int CSYSTEM_CLD_EXITED = CLD_EXITED;
const int CSYSTEM_CLD_KILLED = CLD_KILLED;
const int CSYSTEM_CLD_DUMPED = CLD_DUMPED;

int csystem_pidfd_wait(int pidfd, int nohang, int *code, int *status) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | (nohang ? WNOHANG : 0)) != 0) return -1;
    *code = info.si_pid == 0 ? 0 : info.si_code;
    *status = info.si_status;
    return 0;
}

const int CSYSTEM_CLD_STOPPED = CLD_STOPPED;

int csystem_pidfd_wait_event(int pidfd, int *code, int *status) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | WSTOPPED | WNOHANG) != 0) return -1;
    *code = info.si_pid == 0 ? 0 : info.si_code;
    *status = info.si_status;
    return 0;
}

/* The child's side of csystem_spawn_as_user: system calls only, then it
   waits for its parent's word on `hold` and execs; on failure the step and
   errno go down `report` and it exits. */
static void csystem_become(const char *path, int program, char *const argv[], char *const envp[], const char *cwd,
                           int cwd_fd, unsigned int uid, unsigned int gid, unsigned int real_gid,
                           const unsigned int *groups, int count, int input, int output, int hold, int report) {
    int failure[2] = { 1, 0 };
    if (csystem_plain_signals() != 0) goto fail;
    if (setsid() < 0) goto fail;
    if (dup2(input, 0) < 0 || dup2(output, 1) < 0 || dup2(output, 2) < 0) goto fail;
    /* Everything else closes at exec, `report` with it. */
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
        for (int fd = 3; fd < 65536; fd++) if (fd != report && fd != hold && fd != program && fd != cwd_fd) (void)close(fd);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) != 0) goto fail;
    failure[0] = 2;
    if (setgroups((size_t)count, (const gid_t *)groups) != 0) goto fail;
    failure[0] = 3;
    if (setresgid((gid_t)real_gid, (gid_t)gid, (gid_t)gid) != 0) goto fail;
    failure[0] = 4;
    if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) goto fail;
    (void)prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
    if (cwd_fd >= 0) {
        if (fchdir(cwd_fd) != 0) (void)chdir("/");
    } else if (cwd == NULL || chdir(cwd) != 0) {
        (void)chdir("/");
    }
    /* Held until the parent has recorded who this process is. */
    char word = 0;
    ssize_t got;
    do { got = read(hold, &word, 1); } while (got < 0 && errno == EINTR);
    if (got != 1) _exit(127);
    failure[0] = 5;
    if (program >= 0) {
        (void)syscall(SYS_execveat, program, "", argv, envp, AT_EMPTY_PATH);
        /* A script run from a descriptor closed at exec cannot be reopened
           by its interpreter (execveat(2)): it keeps the descriptor. */
        if (errno == ENOENT && fcntl(program, F_SETFD, 0) == 0) {
            (void)syscall(SYS_execveat, program, "", argv, envp, AT_EMPTY_PATH);
        }
    } else {
        execve(path, argv, envp);
    }
fail:
    failure[1] = errno;
    (void)!write(report, failure, sizeof failure);
    _exit(127);
}

int csystem_spawn_as_user(const char *path, int program, char *const argv[], char *const envp[], const char *cwd,
                          int cwd_fd, unsigned int uid, unsigned int gid, unsigned int real_gid,
                          const unsigned int *groups, int count, int given_input, int output,
                          int *pid, int *pidfd, int *release, int *report_end, int *stage) {
    *stage = 6;
    int report[2], hold[2];
    if (pipe2(report, O_CLOEXEC) != 0) return errno;
    if (pipe2(hold, O_CLOEXEC) != 0) {
        int saved = errno;
        close(report[0]);
        close(report[1]);
        return saved;
    }
    int input = given_input >= 0 ? fcntl(given_input, F_DUPFD_CLOEXEC, 3) : open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (input < 0) {
        int saved = errno;
        close(report[0]);
        close(report[1]);
        close(hold[0]);
        close(hold[1]);
        return saved;
    }
    pid_t child = fork();
    if (child == 0) {
        close(report[0]);
        close(hold[1]);
        csystem_become(path, program, argv, envp, cwd, cwd_fd, uid, gid, real_gid, groups, count, input, output,
                       hold[0], report[1]);
    }
    int saved = errno;
    close(input);
    close(report[1]);
    close(hold[0]);
    if (child < 0) {
        close(report[0]);
        close(hold[1]);
        return saved;
    }
    int handle = csystem_pidfd_open(child, 0);
    if (handle < 0) {
        int opened = errno;
        close(hold[1]);
        close(report[0]);
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        return opened;
    }
    *pid = (int)child;
    *pidfd = handle;
    *release = hold[1];
    *report_end = report[0];
    *stage = 0;
    return 0;
}

int csystem_spawn_release(int pid, int release, int report, int *stage) {
    char word = 1;
    ssize_t wrote;
    do { wrote = write(release, &word, 1); } while (wrote < 0 && errno == EINTR);
    close(release);
    int failure[2] = { 0, 0 };
    ssize_t got;
    do { got = read(report, failure, sizeof failure); } while (got < 0 && errno == EINTR);
    close(report);
    if (got == (ssize_t)sizeof failure) {
        int status;
        while (waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR) {}
        *stage = failure[0];
        return failure[1];
    }
    *stage = 0;
    return 0;
}

/* SIGCHLD as a descriptor, for a thread that waits in poll(2): only when
   the calling thread blocks SIGCHLD (a process that blocks it in every
   thread keeps it pending for the descriptor; otherwise it is lost). */
int csystem_child_signal_fd(void) {
    sigset_t current;
    if (pthread_sigmask(SIG_BLOCK, NULL, &current) != 0) return -1;
    if (sigismember(&current, SIGCHLD) != 1) { errno = EINVAL; return -1; }
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, SIGCHLD);
    return signalfd(-1, &only, SFD_NONBLOCK | SFD_CLOEXEC);
}

void csystem_child_signal_drain(int fd) {
    struct signalfd_siginfo info[8];
    while (read(fd, info, sizeof info) > 0) {}
}

/* prctl is variadic: each option gets a wrapper of its own fixed arity,
   passing the unused arguments as the zeros prctl(2) asks for. */
int csystem_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

const int CSYSTEM_CAP_DAC_READ_SEARCH = CAP_DAC_READ_SEARCH;

int csystem_keep_capabilities(const int *keep, int count) {
    struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof data);
    for (int index = 0; index < count; index++) {
        int capability = keep[index];
        if (capability < 0 || capability >= 32 * _LINUX_CAPABILITY_U32S_3) { errno = EINVAL; return -1; }
        data[capability / 32].effective |= 1U << (capability % 32);
        data[capability / 32].permitted |= 1U << (capability % 32);
    }
    /* Keeping one the process lacks fails with EPERM: keep what it has of them. */
    struct __user_cap_data_struct current[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &header, current) != 0) return -1;
    for (int word = 0; word < _LINUX_CAPABILITY_U32S_3; word++) {
        data[word].permitted &= current[word].permitted;
        data[word].effective &= current[word].permitted;
    }
    return (int)syscall(SYS_capset, &header, data);
}

int csystem_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

int csystem_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
}

int csystem_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

#endif /* __linux__ */
