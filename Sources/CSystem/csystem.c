/* accept4, statx, getdents64, the pidfd calls, pthread_setname_np,
   F_SETLEASE and struct ucred are declared only under _GNU_SOURCE. */
#define _GNU_SOURCE
#include "CSystem.h"

#ifdef __linux__
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <linux/capability.h>

/* glibc added getdents64 in 2.30 and the pidfd wrappers in 2.36; before
   that, and with other C libraries, the raw system calls. */
#if defined(__GLIBC__)
#if !__GLIBC_PREREQ(2, 30)
#define CSYSTEM_RAW_GETDENTS64 1
#endif
#if !__GLIBC_PREREQ(2, 36)
#define CSYSTEM_RAW_PIDFD 1
#endif
#else
#define CSYSTEM_RAW_GETDENTS64 1
#define CSYSTEM_RAW_PIDFD 1
#endif

#ifndef CSYSTEM_RAW_PIDFD
#include <sys/pidfd.h>
#endif

/* The header speaks plain C types where glibc has typedefs. */
_Static_assert(sizeof(socklen_t) == sizeof(unsigned int), "socklen_t is not an unsigned int");
_Static_assert(sizeof(pid_t) == sizeof(int), "pid_t is not an int");
_Static_assert(sizeof(uid_t) == sizeof(unsigned int), "uid_t is not an unsigned int");
_Static_assert(sizeof(gid_t) == sizeof(unsigned int), "gid_t is not an unsigned int");
_Static_assert(sizeof(ssize_t) == sizeof(long), "ssize_t is not a long");

const int CSYSTEM_O_PATH = O_PATH;
const int CSYSTEM_EPOLL_CLOEXEC = EPOLL_CLOEXEC;
const int CSYSTEM_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
const int CSYSTEM_EPOLL_CTL_DEL = EPOLL_CTL_DEL;
const int CSYSTEM_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
const uint32_t CSYSTEM_EPOLLIN = EPOLLIN;
const uint32_t CSYSTEM_EPOLLOUT = EPOLLOUT;
const uint32_t CSYSTEM_EPOLLERR = EPOLLERR;
const uint32_t CSYSTEM_EPOLLHUP = EPOLLHUP;
const uint32_t CSYSTEM_EPOLLRDHUP = EPOLLRDHUP;
const int CSYSTEM_EFD_CLOEXEC = EFD_CLOEXEC;
const int CSYSTEM_EFD_NONBLOCK = EFD_NONBLOCK;

#ifdef SO_PEERPIDFD
const int CSYSTEM_SO_PEERPIDFD = SO_PEERPIDFD;
#else
/* <asm-generic/socket.h> of Linux 6.5, which x86-64 and AArch64 use. */
const int CSYSTEM_SO_PEERPIDFD = 77;
#endif

const int CSYSTEM_F_RDLCK = F_RDLCK;
const int CSYSTEM_F_WRLCK = F_WRLCK;
const int CSYSTEM_F_UNLCK = F_UNLCK;
const int CSYSTEM_FS_IMMUTABLE_FL = FS_IMMUTABLE_FL;
const int CSYSTEM_FS_APPEND_FL = FS_APPEND_FL;

/* MARK: epoll(7) and eventfd(2) */

int csystem_epoll_create1(int flags) {
    return epoll_create1(flags);
}

int csystem_epoll_ctl(int epfd, int operation, int fd, uint32_t events, uint64_t data) {
    struct epoll_event event;
    memset(&event, 0, sizeof(event));
    event.events = events;
    event.data.u64 = data;
    return epoll_ctl(epfd, operation, fd, &event);
}

struct epoll_event *csystem_epoll_events_allocate(int capacity) {
    if (capacity <= 0) {
        return NULL;
    }
    return calloc((size_t)capacity, sizeof(struct epoll_event));
}

void csystem_epoll_events_free(struct epoll_event *events) {
    free(events);
}

int csystem_epoll_wait(int epfd, struct epoll_event *events, int capacity, int timeout) {
    return epoll_wait(epfd, events, capacity, timeout);
}

uint32_t csystem_epoll_event_flags(const struct epoll_event *events, int index) {
    return events[index].events;
}

uint64_t csystem_epoll_event_data(const struct epoll_event *events, int index) {
    return events[index].data.u64;
}

int csystem_eventfd(unsigned int initial, int flags) {
    return eventfd(initial, flags);
}

/* MARK: Sockets */

int csystem_accept4(int listener, struct sockaddr *address, unsigned int *length, int flags) {
    return accept4(listener, address, length, flags);
}

int csystem_peer_credentials(int socket, int *pid, unsigned int *uid, unsigned int *gid) {
    if (pid == NULL || uid == NULL || gid == NULL) {
        errno = EFAULT;
        return -1;
    }
    struct ucred credentials;
    memset(&credentials, 0, sizeof(credentials));
    socklen_t length = sizeof(credentials);
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return -1;
    }
    if (length != sizeof(credentials)) {
        errno = EINVAL;
        return -1;
    }
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

/* MARK: Files and directories */

int csystem_statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buffer) {
    return statx(dirfd, path, flags, mask, buffer);
}

uint64_t csystem_makedev(unsigned int major, unsigned int minor) {
    return makedev(major, minor);
}

int csystem_fstatfs_type(int fd, uint64_t *type) {
    if (type == NULL) {
        errno = EFAULT;
        return -1;
    }
    struct statfs status;
    if (fstatfs(fd, &status) != 0) {
        return -1;
    }
    /* f_type is a signed __fsword_t; the magic numbers are unsigned 32-bit. */
    *type = (uint64_t)(unsigned long)status.f_type;
    return 0;
}

/* Magic numbers <linux/magic.h> does not carry, from each filesystem's own source. */
#define CSYSTEM_ZFS_SUPER_MAGIC 0x2FC12FC1      /* OpenZFS, include/sys/fs/zfs.h */
#define CSYSTEM_NTFS_SB_MAGIC 0x5346544E        /* fs/ntfs: "NTFS" */
#define CSYSTEM_NTFS3_SUPER_MAGIC 0x7366746E    /* fs/ntfs3: "ntfs" */
#define CSYSTEM_JFS_SUPER_MAGIC 0x3153464A      /* fs/jfs/jfs_superblock.h: "JFS1" */
#define CSYSTEM_VIRTIOFS_SHARE_MAGIC 0x6A656A63 /* a virtiofs host share (Docker Desktop, lima) */

const char *csystem_filesystem_name(uint64_t magic) {
    switch (magic) {
    case EXT4_SUPER_MAGIC: return "ext2/3/4";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case XFS_SUPER_MAGIC: return "xfs";
    case CSYSTEM_ZFS_SUPER_MAGIC: return "zfs";
    case TMPFS_MAGIC: return "tmpfs";
    case RAMFS_MAGIC: return "ramfs";
    case NFS_SUPER_MAGIC: return "nfs";
    case FUSE_SUPER_MAGIC: return "fuse";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    case V9FS_MAGIC: return "9p";
    case CIFS_SUPER_MAGIC: return "cifs";
    case SMB2_SUPER_MAGIC: return "smb2";
    case MSDOS_SUPER_MAGIC: return "vfat";
    case EXFAT_SUPER_MAGIC: return "exfat";
    case CSYSTEM_NTFS_SB_MAGIC: return "ntfs";
    case CSYSTEM_NTFS3_SUPER_MAGIC: return "ntfs3";
    case SQUASHFS_MAGIC: return "squashfs";
    case EROFS_SUPER_MAGIC_V1: return "erofs";
    case CSYSTEM_VIRTIOFS_SHARE_MAGIC: return "virtiofs";
    case F2FS_SUPER_MAGIC: return "f2fs";
    case CSYSTEM_JFS_SUPER_MAGIC: return "jfs";
    case REISERFS_SUPER_MAGIC: return "reiserfs";
    case PROC_SUPER_MAGIC: return "proc";
    case SYSFS_MAGIC: return "sysfs";
    default: return NULL;
    }
}

/* The record getdents64(2) writes (its man page's struct linux_dirent64):
   glibc's struct dirent64 has the same fixed part but a fixed-size name. */
struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

long csystem_getdents64(int fd, void *buffer, size_t length) {
#ifdef CSYSTEM_RAW_GETDENTS64
    return syscall(SYS_getdents64, fd, buffer, length);
#else
    return getdents64(fd, buffer, length);
#endif
}

int csystem_next_directory_entry(const void *buffer, size_t length, size_t *offset,
                                 csystem_directory_entry *entry) {
    if (buffer == NULL || offset == NULL || entry == NULL || *offset > length) {
        return -1;
    }
    if (*offset == length) {
        return 0;
    }
    const size_t header = offsetof(struct linux_dirent64, d_name);
    const size_t left = length - *offset;
    if (left < header) {
        return -1;
    }
    const unsigned char *record = (const unsigned char *)buffer + *offset;
    /* Copied out rather than cast: nothing here relies on the buffer's alignment. */
    struct linux_dirent64 fixed;
    memcpy(&fixed, record, header);
    if (fixed.d_reclen <= header || fixed.d_reclen > left) {
        return -1;
    }
    const char *name = (const char *)record + header;
    const char *end = memchr(name, '\0', fixed.d_reclen - header);
    if (end == NULL) {
        return -1;
    }
    entry->inode = fixed.d_ino;
    entry->type = fixed.d_type;
    entry->name = name;
    entry->name_length = (size_t)(end - name);
    *offset += fixed.d_reclen;
    return 1;
}

int csystem_set_lease(int fd, int lease) {
    return fcntl(fd, F_SETLEASE, lease);
}

int csystem_get_inode_flags(int fd, int *flags) {
    return ioctl(fd, FS_IOC_GETFLAGS, flags);
}

int csystem_set_inode_flags(int fd, const int *flags) {
    return ioctl(fd, FS_IOC_SETFLAGS, flags);
}

long csystem_get_xattr_at(int dirfd, const char *name, const char *attribute, void *buffer, size_t size) {
    char path[4200];
    int length = snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, name);
    if (length < 0 || (size_t)length >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return (long)lgetxattr(path, attribute, buffer, size);
}

int csystem_rename_exchange(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, (unsigned int)RENAME_EXCHANGE);
}

int csystem_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, (unsigned int)RENAME_NOREPLACE);
}

/* MARK: Processes and threads */

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

/* The helper's descriptor 3 is `keep`, whatever number it has here. */
int csystem_spawn_helper(const char *path, char *const argv[], char *const envp[], int keep, int *pid) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
    /* dup2 onto itself would leave close-on-exec set: move it off 3 first. */
    int source = keep;
    if (keep == 3) {
        source = fcntl(keep, F_DUPFD_CLOEXEC, 4);
        if (source < 0) return errno;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) goto close_source;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) goto destroy_actions;
    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    if ((result = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) != 0
        || (result = posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)) != 0
        || (result = posix_spawn_file_actions_adddup2(&actions, source, 3)) != 0
        || (result = posix_spawn_file_actions_addclosefrom_np(&actions, 4)) != 0
        || (result = posix_spawnattr_setsigmask(&attributes, &empty)) != 0
        || (result = posix_spawnattr_setsigdefault(&attributes, &all)) != 0
        || (result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0) {
        goto destroy_attributes;
    }
    pid_t child = 0;
    result = posix_spawn(&child, path, &actions, &attributes, argv, envp);
    if (result == 0) *pid = (int)child;
destroy_attributes:
    posix_spawnattr_destroy(&attributes);
destroy_actions:
    posix_spawn_file_actions_destroy(&actions);
close_source:
    if (source != keep) close(source);
    return result;
#else
    (void)path; (void)argv; (void)envp; (void)keep; (void)pid;
    return ENOSYS;
#endif
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

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The child's side of csystem_spawn_as_user: system calls only, then it
   waits for its parent's word on `hold` and execs; on failure the step and
   errno go down `report` and it exits. */
static void csystem_become(const char *path, int program, char *const argv[], char *const envp[], const char *cwd,
                           int cwd_fd, unsigned int uid, unsigned int gid, unsigned int real_gid,
                           const unsigned int *groups, int count, int input, int output, int hold, int report) {
    int failure[2] = { 1, 0 };
    struct sigaction plain;
    memset(&plain, 0, sizeof plain);
    plain.sa_handler = SIG_DFL;
    for (int signal = 1; signal < NSIG; signal++) (void)sigaction(signal, &plain, NULL);
    sigset_t empty;
    sigemptyset(&empty);
    if (sigprocmask(SIG_SETMASK, &empty, NULL) != 0) goto fail;
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
                          const unsigned int *groups, int count, int output,
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
    int input = open("/dev/null", O_RDONLY | O_CLOEXEC);
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

/* MARK: The system log */

const int CSYSTEM_LOG_AUTHPRIV = LOG_AUTHPRIV;

static void csystem_open_log(void) {
    /* The program's name as the tag, its pid beside it; the facility comes with each message. */
    openlog(NULL, LOG_PID, LOG_USER);
}

void csystem_syslog(int facility, int priority, const char *message) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, csystem_open_log);
    syslog(facility | priority, "%s", message);
}

long csystem_getrandom(void *buffer, size_t length, unsigned int flags) {
    return (long)getrandom(buffer, length, flags);
}
