/* A system call filter for a process that only reads what it was handed
   and writes its answer: OpenSSH's sandbox-seccomp-filter.c and systemd's
   seccomp-util.c do the same with a longer list. */
#include "csystem_private.h"
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>

#if defined(__x86_64__)
#define CSYSTEM_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CSYSTEM_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "no seccomp architecture for this target"
#endif

#define CSYSTEM_ALLOW(name) \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_##name, 0, 1), \
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int csystem_restrict_to_reading_and_writing(void) {
    struct sock_filter filter[] = {
        /* Another architecture's numbers mean other calls: refused whole. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CSYSTEM_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* The descriptors it was handed. */
        CSYSTEM_ALLOW(read),
        CSYSTEM_ALLOW(write),
        CSYSTEM_ALLOW(close),
        CSYSTEM_ALLOW(fstat),
        CSYSTEM_ALLOW(newfstatat),
        CSYSTEM_ALLOW(lseek),
        /* Memory, for the parser's and the runtime's heap. */
        CSYSTEM_ALLOW(brk),
        CSYSTEM_ALLOW(mmap),
        CSYSTEM_ALLOW(munmap),
        CSYSTEM_ALLOW(mremap),
        CSYSTEM_ALLOW(madvise),
        CSYSTEM_ALLOW(mprotect),
        /* What the runtime does on its own: locks, hashing seeds, time, signals, the end. */
        CSYSTEM_ALLOW(futex),
        CSYSTEM_ALLOW(getrandom),
        CSYSTEM_ALLOW(clock_gettime),
        CSYSTEM_ALLOW(rt_sigprocmask),
        CSYSTEM_ALLOW(rt_sigreturn),
        CSYSTEM_ALLOW(gettid),
        CSYSTEM_ALLOW(getpid),
        CSYSTEM_ALLOW(tgkill),
        CSYSTEM_ALLOW(exit),
        CSYSTEM_ALLOW(exit_group),
        /* Anything else (open, socket, execve, ptrace…) ends the process. */
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    };
    struct sock_fprog program = {
        .len = (unsigned short)(sizeof filter / sizeof filter[0]),
        .filter = filter,
    };
    /* Not dumpable: no process of the same user may trace it or read its memory. */
    if (prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) != 0) return -1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) != 0) return -1;
    /* prctl(2), not seccomp(2): the Guard's unit lets its children call
       prctl (@system-service) but not seccomp. The filter holds for this
       thread and every thread it starts; the inspector starts none. */
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0UL, 0UL);
}

int csystem_sealed_memory(const void *bytes, size_t count) {
    int fd = (int)syscall(SYS_memfd_create, "familycontrols-inspect-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    size_t written = 0;
    while (written < count) {
        ssize_t wrote = write(fd, (const char *)bytes + written, count - written);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) goto fail;
        written += (size_t)wrote;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) goto fail;
    if (lseek(fd, 0, SEEK_SET) != 0) goto fail;
    return fd;
fail:;
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}
