/* What every file of CSystem includes first: _GNU_SOURCE (accept4, statx,
   getdents64, the pidfd calls, pthread_setname_np, F_SETLEASE and struct
   ucred are declared only under it), the system headers, and which calls
   go through syscall(2). Private to CSystem. */
#ifndef CSYSTEM_PRIVATE_H
#define CSYSTEM_PRIVATE_H

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
#endif /* __linux__ */

#endif
