/* CSystem: the system calls SystemKit needs that Swift cannot reach, in
   plain C types. This file: constants, epoll(7) and eventfd(2), sockets,
   and the system log; csystem_files.c and csystem_process.c the rest. */
#include "csystem_private.h"

#ifdef __linux__

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
