#ifndef CSYSTEM_H
#define CSYSTEM_H

/*
 * The Linux calls and constants SystemKit needs that the Swift Glibc module
 * declares badly or not at all: headers outside its module map
 * (<sys/epoll.h>, <sys/eventfd.h>, <sys/statfs.h>), functions glibc declares
 * only under _GNU_SOURCE (accept4, statx, getdents64, the pidfd calls,
 * posix_spawn_file_actions_addclosefrom_np,
 * pthread_setname_np, F_SETLEASE, struct ucred), a variadic function
 * (prctl), and ioctls whose request number misstates their argument.
 *
 * Every function is real C in csystem.c, compiled with _GNU_SOURCE, so no
 * declaration here depends on a feature macro Swift's importer lacks.
 * Functions return what the call returns and leave errno set on failure;
 * retrying EINTR is the Swift side's job (retryingOnInterrupt).
 *
 * This header includes only kernel headers and <stdint.h>: a glibc header
 * that the Glibc module includes too would be copied into this module, and
 * its macros (O_RDONLY, S_IFMT) and types (pthread_t) would then be
 * ambiguous or mis-attributed in Swift. What comes from such headers is
 * declared here with plain C types, or as `extern const` values defined in
 * csystem.c.
 */

#ifdef __linux__
#include <stddef.h>
#include <stdint.h>
#include <linux/magic.h>
#include <linux/stat.h>

/* MARK: epoll(7) and eventfd(2) */

/// glibc's `struct epoll_event`, kept opaque: it is packed on x86-64 and
/// naturally aligned elsewhere, and only C lays it out.
struct epoll_event;

/// `epoll_create1(2)`.
int csystem_epoll_create1(int flags);

/// `epoll_ctl(2)` with the `struct epoll_event` built from `events` and
/// `data` (`data.u64`). Both are ignored for `CSYSTEM_EPOLL_CTL_DEL`.
int csystem_epoll_ctl(int epfd, int operation, int fd, uint32_t events, uint64_t data);

/// Room for `capacity` zeroed events (`calloc(3)`), or NULL when out of memory.
struct epoll_event *csystem_epoll_events_allocate(int capacity);

/// Frees what `csystem_epoll_events_allocate` returned.
void csystem_epoll_events_free(struct epoll_event *events);

/// `epoll_wait(2)` into `events`, which has room for `capacity` entries.
int csystem_epoll_wait(int epfd, struct epoll_event *events, int capacity, int timeout);

/// The flags of entry `index` of an `epoll_wait` result.
uint32_t csystem_epoll_event_flags(const struct epoll_event *events, int index);

/// The registration data (`data.u64`) of entry `index` of an `epoll_wait` result.
uint64_t csystem_epoll_event_data(const struct epoll_event *events, int index);

/// `EPOLL_CLOEXEC`.
/// `O_PATH`, which Glibc's module leaves out without `_GNU_SOURCE`.
extern const int CSYSTEM_O_PATH;

extern const int CSYSTEM_EPOLL_CLOEXEC;
/// `EPOLL_CTL_ADD`.
extern const int CSYSTEM_EPOLL_CTL_ADD;
/// `EPOLL_CTL_DEL`.
extern const int CSYSTEM_EPOLL_CTL_DEL;
/// `EPOLL_CTL_MOD`.
extern const int CSYSTEM_EPOLL_CTL_MOD;
/// `EPOLLIN`.
extern const uint32_t CSYSTEM_EPOLLIN;
/// `EPOLLOUT`.
extern const uint32_t CSYSTEM_EPOLLOUT;
/// `EPOLLERR`.
extern const uint32_t CSYSTEM_EPOLLERR;
/// `EPOLLHUP`.
extern const uint32_t CSYSTEM_EPOLLHUP;
/// `EPOLLRDHUP`.
extern const uint32_t CSYSTEM_EPOLLRDHUP;

/// `eventfd(2)`.
int csystem_eventfd(unsigned int initial, int flags);

/// `EFD_CLOEXEC`.
extern const int CSYSTEM_EFD_CLOEXEC;
/// `EFD_NONBLOCK`.
extern const int CSYSTEM_EFD_NONBLOCK;

/* MARK: Sockets */

struct sockaddr;

/// `accept4(2)`; `length` points to a `socklen_t`.
int csystem_accept4(int listener, struct sockaddr *address, unsigned int *length, int flags);

/// The peer's credentials as the kernel recorded them at connect time
/// (`getsockopt(SO_PEERCRED)` into a `struct ucred`): a `pid_t`, a `uid_t`
/// and a `gid_t`. 0, or -1 with errno set (`EINVAL` if the kernel answered
/// with an unexpected size).
int csystem_peer_credentials(int socket, int *pid, unsigned int *uid, unsigned int *gid);

/// `SO_PEERPIDFD` (Linux 6.5): a pidfd for the peer of a Unix socket.
/// csystem.c supplies the asm-generic value where kernel headers predate it.
extern const int CSYSTEM_SO_PEERPIDFD;

/* MARK: Files and directories */

/// `statx(2)`, filling the kernel's own `struct statx` (<linux/stat.h>).
int csystem_statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buffer);

static const unsigned int CSYSTEM_STATX_BASIC_STATS = STATX_BASIC_STATS;
static const uint64_t CSYSTEM_STATX_ATTR_IMMUTABLE = STATX_ATTR_IMMUTABLE;

/// `makedev(3)`: the `dev_t` glibc builds from a major and minor number, so
/// `statx` results compare equal to `st_dev`.
uint64_t csystem_makedev(unsigned int major, unsigned int minor);

/// `fstatfs(2)`, keeping only `f_type`, the filesystem's magic number.
int csystem_fstatfs_type(int fd, uint64_t *type);

/// A short name for a `statfs` `f_type` (`"ext2/3/4"`, `"tmpfs"`), or NULL
/// for a magic number this table does not know.
const char *csystem_filesystem_name(uint64_t magic);

static const uint64_t CSYSTEM_EXT4_SUPER_MAGIC = EXT4_SUPER_MAGIC;
static const uint64_t CSYSTEM_BTRFS_SUPER_MAGIC = BTRFS_SUPER_MAGIC;
static const uint64_t CSYSTEM_XFS_SUPER_MAGIC = XFS_SUPER_MAGIC;
static const uint64_t CSYSTEM_TMPFS_MAGIC = TMPFS_MAGIC;
static const uint64_t CSYSTEM_RAMFS_MAGIC = RAMFS_MAGIC;
static const uint64_t CSYSTEM_NFS_SUPER_MAGIC = NFS_SUPER_MAGIC;
static const uint64_t CSYSTEM_FUSE_SUPER_MAGIC = FUSE_SUPER_MAGIC;
static const uint64_t CSYSTEM_OVERLAYFS_SUPER_MAGIC = OVERLAYFS_SUPER_MAGIC;

/// `getdents64(2)`: fills `buffer` with `struct linux_dirent64` records.
/// Returns the bytes filled (an `ssize_t`), 0 at the end, or -1.
long csystem_getdents64(int fd, void *buffer, size_t length);

/// One record of a `getdents64` buffer, decoded.
typedef struct csystem_directory_entry {
    /// `d_ino`.
    uint64_t inode;
    /// `d_type`: one of the `DT_*` constants of <dirent.h>.
    unsigned char type;
    /// `d_name`, pointing into the buffer; NUL-terminated.
    const char *name;
    /// The length of `name`, without the NUL.
    size_t name_length;
} csystem_directory_entry;

/// Decodes the record at `*offset` of the first `length` bytes of `buffer`
/// and moves `*offset` past it.
/// Returns 1 for a record, 0 once `*offset` reaches `length`, and -1 when
/// the record does not fit in what is left or its name has no NUL (the
/// buffer is not what getdents64 wrote); `*entry` is then untouched.
int csystem_next_directory_entry(const void *buffer, size_t length, size_t *offset,
                                 csystem_directory_entry *entry);

/// `fcntl(fd, F_SETLEASE, lease)`; `lease` is `CSYSTEM_F_RDLCK`,
/// `CSYSTEM_F_WRLCK` or `CSYSTEM_F_UNLCK`.
int csystem_set_lease(int fd, int lease);

/// `F_RDLCK`: a read lease.
extern const int CSYSTEM_F_RDLCK;
/// `F_WRLCK`: a write lease.
extern const int CSYSTEM_F_WRLCK;
/// `F_UNLCK`: no lease; releases the one held.
extern const int CSYSTEM_F_UNLCK;

/// `ioctl(fd, FS_IOC_GETFLAGS, flags)`. The request is encoded with a `long`
/// argument, but the kernel reads and writes an `int` (`ioctl_iflags(2)`).
int csystem_get_inode_flags(int fd, int *flags);

/// `ioctl(fd, FS_IOC_SETFLAGS, flags)`, with the same `int` argument.
int csystem_set_inode_flags(int fd, const int *flags);

/// `FS_IMMUTABLE_FL` (<linux/fs.h>, whose <linux/mount.h> this header
/// cannot include beside glibc's <sys/mount.h>).
extern const int CSYSTEM_FS_IMMUTABLE_FL;
/// `FS_APPEND_FL`.
extern const int CSYSTEM_FS_APPEND_FL;

/// `lgetxattr(2)` of `name` inside the directory `dirfd`, reached as
/// `/proc/self/fd/DIRFD/NAME` so the file is neither opened (an
/// execute-only program cannot be) nor, if it is a link, followed.
/// Returns the value's length, or -1 with errno (`ENODATA`: no such attribute).
long csystem_get_xattr_at(int dirfd, const char *name, const char *attribute, void *buffer, size_t size);

/// `renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_EXCHANGE)`
/// (`rename(2)`): the two names swap their files in one step, so each name
/// always holds one whole file or folder. Through `syscall(2)`: older glibc
/// headers do not declare it.
int csystem_rename_exchange(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// `renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE)`: moves
/// a name, failing with `EEXIST` rather than replacing what the new name holds.
int csystem_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/* MARK: Processes and threads */

/// `pipe2(fds, O_CLOEXEC)`: a pipe whose ends are close-on-exec from the
/// start, so a program another thread spawns at that moment never gets one.
int csystem_pipe_cloexec(int fds[2]);

/// `pidfd_open(2)` for a `pid_t`.
int csystem_pidfd_open(int pid, unsigned int flags);

/// `pidfd_send_signal(2)` without a `siginfo_t` (the kernel fills in one as
/// `kill(2)` would); signal 0 only checks that the process exists.
int csystem_pidfd_send_signal(int pidfd, int signal, unsigned int flags);

/// Starts `path` with `argv` and `envp` (`fork(2)`, then only system calls
/// until `execve(2)`: safe from a multi-threaded process). The new process
/// gets `/dev/null` as descriptors 0 and 1, keeps descriptor 2 (standard
/// error), gets `keep` as descriptor 3, and every other descriptor closed;
/// its signal mask is empty, every signal has its default action, and it is
/// sent `SIGKILL` when the calling thread ends (`PR_SET_PDEATHSIG`), so a
/// caller that is killed takes it along (a program it runs cannot ask for
/// that itself, as ``csystem_set_parent_death_signal`` does).
/// Returns 0 and the pid in `*pid`, or an errno value (errno of the exec when it failed).
int csystem_spawn_helper(const char *path, char *const argv[], char *const envp[], int keep, int *pid);

/// Starts `file` (looked up in `PATH` when it has no slash, `posix_spawnp(3)`)
/// with `argv` and `envp`, `input` as its descriptor 0, `output` as 1 and
/// `error` as 2, every other descriptor closed, an empty signal mask and
/// every signal at its default action: a program such as ssh(1) carrying a
/// stream on its standard input and output.
/// Returns 0 and the pid in `*pid`, or an errno value.
int csystem_spawn_connected(const char *file, char *const argv[], char *const envp[],
                            int input, int output, int error, int *pid);

/// Reaps the process behind `pidfd` (`waitid(P_PIDFD, pidfd, WEXITED)`,
/// with `WNOHANG` when `nohang` is not 0). Returns 0 and sets `*code`
/// (`CSYSTEM_CLD_EXITED`, `CSYSTEM_CLD_KILLED`, `CSYSTEM_CLD_DUMPED`; 0 when
/// `nohang` and the process still runs) and `*status` (the exit status or
/// the signal); -1 with errno on failure.
int csystem_pidfd_wait(int pidfd, int nohang, int *code, int *status);

/// Starts the program `program` (a descriptor, run by execveat(2) with
/// `AT_EMPTY_PATH`, never looked up by a path), or at `path` when `program`
/// is -1, as another user, for good: a child of this
/// process in a session of its own (`setsid`), `input` as its standard input
/// (`/dev/null` when -1), `output` as its standard output and error, every other descriptor
/// closed, no signal blocked or ignored, `no_new_privs` set, the groups
/// `groups` (`count` of them), real gid `real_gid`, effective and saved gid
/// `gid`, every uid `uid`, then the folder `cwd_fd` (or, when -1, `cwd`; or
/// `/` when neither can be entered). The child then waits, before exec, until
/// csystem_spawn_release lets it go: its parent records who it is first.
/// A real gid other than the effective one makes the kernel run the program
/// in secure-execution mode, which leaves it not dumpable from its first
/// instruction: no process of that user may trace it or read its memory.
/// Maps to fork(2), pidfd_open(2) and execveat(2); only system calls run
/// between fork and exec, so any thread may call it.
/// Returns 0, the pid in `*pid`, a pidfd in `*pidfd`, and the two ends
/// csystem_spawn_release takes in `*release` and `*report`; or an errno value
/// and in `*stage` the step that failed (1 setup, 2 groups, 3 gid, 4 uid,
/// 5 exec, 6 fork or pidfd).
int csystem_spawn_as_user(const char *path, int program, char *const argv[], char *const envp[], const char *cwd,
                          int cwd_fd, unsigned int uid, unsigned int gid, unsigned int real_gid,
                          const unsigned int *groups, int count, int input, int output,
                          int *pid, int *pidfd, int *release, int *report, int *stage);

/// Lets a child csystem_spawn_as_user holds go on to exec: writes its word
/// on `release`, then waits on `report` until the exec succeeds (0) or fails
/// (the errno, `*stage` the step; the child is reaped). Closes both.
int csystem_spawn_release(int pid, int release, int report, int *stage);

/// A non-blocking signalfd(2) for SIGCHLD, or -1 (EINVAL when the calling
/// thread does not block SIGCHLD, so that the signal would never reach it).
int csystem_child_signal_fd(void);

/// Reads every pending signal off a csystem_child_signal_fd descriptor.
void csystem_child_signal_drain(int fd);

/// What `waitid(P_PIDFD, pidfd, WEXITED | WSTOPPED | WNOHANG)` found: 0 and
/// `*code` 0 when nothing happened, else `*code` is `CSYSTEM_CLD_EXITED`,
/// `CSYSTEM_CLD_KILLED`, `CSYSTEM_CLD_DUMPED` (reaped) or `CSYSTEM_CLD_STOPPED`
/// and `*status` the exit status or the signal; -1 with errno on failure.
int csystem_pidfd_wait_event(int pidfd, int *code, int *status);

extern const int CSYSTEM_CLD_STOPPED;

/// `CLD_EXITED`, `CLD_KILLED`, `CLD_DUMPED` (`waitid(2)`'s `si_code`).
extern const int CSYSTEM_CLD_EXITED;
extern const int CSYSTEM_CLD_KILLED;
extern const int CSYSTEM_CLD_DUMPED;

/// `prctl(PR_SET_PDEATHSIG, signal)`: `signal` reaches the calling process
/// when the thread that started it ends.
int csystem_set_parent_death_signal(int signal);

/// Keeps only the capabilities `keep` (`count` of `CAP_*` numbers) in the
/// calling process's effective and permitted sets and none inheritable
/// (`capset(2)`): what a helper gives up it never gets back, and under
/// `NoNewPrivileges=` not even by running a program as root.
int csystem_keep_capabilities(const int *keep, int count);

/// `CAP_DAC_READ_SEARCH`.
extern const int CSYSTEM_CAP_DAC_READ_SEARCH;

/// `prctl(PR_SET_DUMPABLE, dumpable)`: 0 makes the process undumpable, 1
/// dumpable again.
int csystem_set_dumpable(int dumpable);

/// `prctl(PR_GET_DUMPABLE)`: 0 or 1 (2 under `suid_dumpable`), or -1.
int csystem_get_dumpable(void);

/// `pthread_setname_np(3)` for the calling thread; `name` must fit in
/// `CSYSTEM_THREAD_NAME_MAX` bytes.
int csystem_set_thread_name(const char *name);

/// The longest thread name in bytes: the kernel's 16-byte `comm`, less the
/// NUL (`TASK_COMM_LEN`, which no user-space header exports).
static const size_t CSYSTEM_THREAD_NAME_MAX = 15;

/* MARK: The system log */

/// `openlog(3)` once (the program's name, `LOG_PID`), then `syslog(3)` of
/// `message` as it is (never as a format) at `facility | priority`: the
/// variadic `syslog` itself does not reach Swift.
void csystem_syslog(int facility, int priority, const char *message);

/// `LOG_AUTHPRIV`, the facility of authentication messages (sudo's, sshd's).
extern const int CSYSTEM_LOG_AUTHPRIV;

/* MARK: getrandom(2) */

/// `getrandom(buffer, length, flags)`, which the Glibc module does not
/// declare (<sys/random.h>): the bytes of a new one-time-code secret.
long csystem_getrandom(void *buffer, size_t length, unsigned int flags);

/// Makes the calling process not dumpable, sets `no_new_privs` and a
/// seccomp filter that lets it
/// only read and write descriptors it holds, manage its memory, and exit:
/// any other system call (open, socket, execve, ptrace, kill…) ends the
/// process with `SIGSYS`. For good, for the calling thread and every thread
/// it starts (call it before any other thread runs). Returns 0, or -1
/// with errno. (csystem_sandbox.c)
int csystem_restrict_to_reading_and_writing(void);

/// A memory file (memfd_create(2), close-on-exec) holding the `count` bytes
/// at `bytes`, sealed against every change, read from its start: bytes
/// handed to another process that cannot alter them. Returns the
/// descriptor, or -1 with errno. (csystem_sandbox.c)
int csystem_sealed_memory(const void *bytes, size_t count);

/* MARK: Memory */

/// Lets go of the pages of the read-only segments (code, constants) of the
/// program and every library loaded (`dl_iterate_phdr`, with the loader's
/// lock held): `madvise(MADV_DONTNEED)` over the whole pages of each
/// `PT_LOAD` segment without `PF_W`, except in objects whose code is
/// relocated in place (`DT_TEXTREL`) and the vDSO. Writable segments, and
/// the relocated tables in them, are never touched. The pages stay in the
/// page cache and map again when run or read. Returns the bytes let go, or
/// -1 with errno when `sysconf` fails or every `madvise` failed (a system
/// call filter that refuses it). (csystem_memory.c)
long csystem_release_loaded_code_pages(void);

/// The bytes csystem_release_loaded_code_pages would let go of now, letting
/// go of nothing; -1 with errno when `sysconf` fails. (csystem_memory.c)
long csystem_loaded_code_pages_size(void);

#endif /* __linux__ */

#endif /* CSYSTEM_H */
