/*
 * The login-limits file, opened and read for one uid's line
 * (login_limits_scan, docs/design/login-limits.md). Everything is on the
 * stack: a child can start su with a memory limit of their choosing
 * (ulimit -v), and an allocation that fails there must not let them in.
 */
#define _GNU_SOURCE
#include "login_limits.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Lines read through a buffer that holds two of the longest. */
struct line_reader {
    int fd;
    size_t start, end;
    size_t total;
    int eof;
    int skipping; /* inside a line longer than LOGIN_LIMITS_LINE_MAX */
    char buffer[2 * (LOGIN_LIMITS_LINE_MAX + 1)];
};

enum line_result { LINE_READ, LINE_END, LINE_ERROR, LINE_FILE_TOO_LARGE };

/* The next line, without its "\n" (*ended says whether it had one); an
 * overlong line is skipped whole and comes back with *overlong set. */
static enum line_result next_line(struct line_reader *r, const char **line, size_t *length, int *ended, int *overlong) {
    *overlong = 0;
    for (;;) {
        char *newline = memchr(r->buffer + r->start, '\n', r->end - r->start);
        if (newline) {
            *line = r->buffer + r->start;
            *length = (size_t)(newline - *line);
            *ended = 1;
            r->start = (size_t)(newline - r->buffer) + 1;
            if (r->skipping) {
                r->skipping = 0;
                *overlong = 1;
            }
            return LINE_READ;
        }
        if (r->end - r->start > LOGIN_LIMITS_LINE_MAX) r->skipping = 1;
        if (r->skipping) r->start = r->end;
        if (r->eof) {
            if (r->start == r->end && !r->skipping) return LINE_END;
            *line = r->buffer + r->start;
            *length = r->end - r->start;
            *ended = 0;
            *overlong = r->skipping;
            r->skipping = 0;
            r->start = r->end;
            return LINE_READ;
        }
        memmove(r->buffer, r->buffer + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
        ssize_t count = read(r->fd, r->buffer + r->end, sizeof r->buffer - r->end);
        if (count < 0 && errno == EINTR) continue;
        if (count < 0) return LINE_ERROR;
        if (count == 0) {
            r->eof = 1;
            continue;
        }
        r->total += (size_t)count;
        if (r->total > LOGIN_LIMITS_FILE_MAX) return LINE_FILE_TOO_LARGE;
        r->end += (size_t)count;
    }
}

/* Errors of this process, not of the file: out of memory or descriptors. */
static int starved(int error) { return error == ENOMEM || error == EMFILE || error == ENFILE || error == ENOBUFS; }

static enum login_limits_scan ignored(struct login_limits_report *report, const char *why) {
    report->why = why;
    return LOGIN_LIMITS_IGNORED;
}

static void damaged(struct login_limits_report *report, int number, const char *why) {
    if (report->damaged++ == 0) {
        report->first_damaged = number;
        report->first_why = why;
    }
}

static enum login_limits_scan scan(struct line_reader *reader, unsigned long uid, struct login_limits *limits,
                                   char *names, size_t capacity, struct login_limits_report *report) {
    int found = 0, number = 0;
    const char *line;
    size_t length;
    int ended, overlong;
    struct login_limits candidate;
    for (;;) {
        switch (next_line(reader, &line, &length, &ended, &overlong)) {
        case LINE_END:
            if (number == 0) return ignored(report, "it is empty");
            return found ? LOGIN_LIMITS_FOUND : LOGIN_LIMITS_NONE;
        case LINE_ERROR:
            if (starved(errno)) {
                report->why = "it cannot be read: out of memory";
                return LOGIN_LIMITS_UNCHECKED;
            }
            return ignored(report, "it cannot be read");
        case LINE_FILE_TOO_LARGE:
            return ignored(report, "it is larger than 1 MiB");
        case LINE_READ:
            break;
        }
        number++;
        if (number == 1) {
            if (overlong || !ended || length != strlen(LOGIN_LIMITS_HEADER) || memcmp(line, LOGIN_LIMITS_HEADER, length) != 0)
                return ignored(report, "it does not start with \"" LOGIN_LIMITS_HEADER "\"");
            continue;
        }
        if (overlong) {
            damaged(report, number, "longer than 4096 bytes");
            continue;
        }
        if (length > 0 && line[0] == '#') continue;
        const char *why = NULL;
        if (!ended) {
            damaged(report, number, "cut short (no end of line)");
        } else if (login_limits_parse_line(line, length, &candidate, &why) != 0) {
            damaged(report, number, why);
        } else if (candidate.uid == uid && found) {
            damaged(report, number, "a second line for the same uid");
        } else if (candidate.uid == uid && capacity > candidate.names_length) {
            memcpy(names, candidate.names, candidate.names_length);
            *limits = candidate;
            limits->names = names;
            found = 1;
        }
    }
}

enum login_limits_scan login_limits_scan(const char *path, unsigned long uid, struct login_limits *limits, char *names,
                                         size_t capacity, struct login_limits_report *report) {
    memset(report, 0, sizeof *report);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (starved(errno)) {
            report->why = "it cannot be opened: out of memory or descriptors";
            return LOGIN_LIMITS_UNCHECKED;
        }
        report->missing = errno == ENOENT;
        return ignored(report, errno == ENOENT ? "it does not exist"
                               : errno == ELOOP ? "it is a symbolic link" : "it cannot be opened");
    }
    struct stat status;
    enum login_limits_scan result;
    if (fstat(fd, &status) != 0) {
        result = starved(errno) ? LOGIN_LIMITS_UNCHECKED : LOGIN_LIMITS_IGNORED;
        report->why = "it cannot be read";
    } else if (!S_ISREG(status.st_mode)) {
        result = ignored(report, "it is not a regular file");
    } else if (status.st_uid != 0) {
        result = ignored(report, "it is not owned by root");
    } else if (status.st_mode & (S_IWGRP | S_IWOTH)) {
        result = ignored(report, "its group or others may write it");
    } else if (status.st_size > LOGIN_LIMITS_FILE_MAX) {
        result = ignored(report, "it is larger than 1 MiB");
    } else {
        struct line_reader reader = { .fd = fd };
        result = scan(&reader, uid, limits, names, capacity, report);
    }
    close(fd);
    return result;
}
