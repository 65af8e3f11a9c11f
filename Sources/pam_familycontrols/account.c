/*
 * pam_familycontrols.so's account phase: login hours and daily time, kept
 * at login from the state the Guard last wrote (docs/design/login-limits.md).
 *
 *   account [success=ok ignore=ignore perm_denied=bad default=ignore] pam_familycontrols.so [limits=PATH] [debug]
 *
 * It refuses (PAM_PERM_DENIED) only a child whose line in the file says so,
 * and tells them why. Root is let through before any file is opened; every
 * other user without a line, and everyone when the file is missing, damaged
 * or not root's alone, gets PAM_IGNORE: a fault here never refuses a login.
 * It never connects to the Guard and never waits.
 */
#define _GNU_SOURCE
#include "pam_familycontrols.h"
#include "login_limits.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>

#define NAMES_SHOWN_MAX 512
#define MESSAGE_MAX 2048

struct account_options {
    const char *limits;
    int debug;
};

static void parse_account_options(pam_handle_t *pamh, int argc, const char **argv, struct account_options *options) {
    options->limits = PAM_FAMILYCONTROLS_DEFAULT_LIMITS;
    options->debug = 0;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "limits=", 7) == 0 && argv[i][7] == '/') {
            options->limits = argv[i] + 7;
        } else if (strcmp(argv[i], "debug") == 0) {
            options->debug = 1;
        } else {
            pam_syslog(pamh, LOG_WARNING, "unknown option \"%.64s\" ignored", argv[i]);
        }
    }
}

/* The uid of `user`: 0 found, 1 no such account, -1 the lookup failed. */
static int lookup_uid(const char *user, uid_t *uid) {
    long suggested = sysconf(_SC_GETPW_R_SIZE_MAX);
    size_t size = suggested > 0 ? (size_t)suggested : 16384;
    for (;;) {
        char *buffer = malloc(size);
        if (!buffer) return -1;
        struct passwd entry, *found = NULL;
        int error = getpwnam_r(user, &entry, buffer, size, &found);
        if (found) *uid = entry.pw_uid;
        free(buffer);
        if (error == ERANGE && size < (1 << 20)) {
            size *= 2;
            continue;
        }
        if (found) return 0;
        return error == 0 || error == ENOENT || error == ESRCH ? 1 : -1;
    }
}

/* The machine's local time (/etc/localtime), whatever TZ the caller set:
 * su runs with the environment of the user who typed it, and glibc honours a
 * TZ rule (TZ=UTC-12) even in a set-user-ID program. TZ is set aside only
 * for the conversion and put back; the programs that run the account phase
 * (login, su, sshd's monitor, a display manager's worker) do not read the
 * environment from another thread meanwhile. */
static int machine_now(struct login_now *now) {
    now->seconds = time(NULL);
    const char *zone = getenv("TZ");
    char *saved = NULL;
    if (zone) {
        saved = strdup(zone);
        if (!saved) return -1;
        unsetenv("TZ");
    }
    tzset();
    struct tm local;
    struct tm *converted = localtime_r(&now->seconds, &local);
    if (saved) {
        setenv("TZ", saved, 1);
        free(saved);
        tzset();
    }
    if (!converted) return -1;
    now->year = local.tm_year + 1900;
    now->month = local.tm_mon + 1;
    now->day = local.tm_mday;
    now->weekday = (local.tm_wday + 6) % 7;
    now->minute = local.tm_hour * 60 + local.tm_min;
    return 0;
}

/* The file, if it is a regular file of root's that no one else may write, of
 * at most LOGIN_LIMITS_FILE_MAX bytes. Returns its bytes (caller frees) or
 * NULL with *why, and *missing when it does not exist. */
static char *read_limits(const char *path, size_t *length, const char **why, int *missing) {
    *missing = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        *missing = errno == ENOENT;
        *why = errno == ENOENT ? "it does not exist" : errno == ELOOP ? "it is a symbolic link" : "it cannot be opened";
        return NULL;
    }
    struct stat status;
    char *bytes = NULL;
    if (fstat(fd, &status) != 0) {
        *why = "it cannot be read";
    } else if (!S_ISREG(status.st_mode)) {
        *why = "it is not a regular file";
    } else if (status.st_uid != 0) {
        *why = "it is not owned by root";
    } else if (status.st_mode & (S_IWGRP | S_IWOTH)) {
        *why = "its group or others may write it";
    } else if (status.st_size > LOGIN_LIMITS_FILE_MAX) {
        *why = "it is larger than 1 MiB";
    } else if (!(bytes = malloc(LOGIN_LIMITS_FILE_MAX + 1))) {
        *why = "out of memory";
    } else {
        size_t have = 0;
        for (;;) {
            ssize_t count = read(fd, bytes + have, LOGIN_LIMITS_FILE_MAX + 1 - have);
            if (count < 0 && errno == EINTR) continue;
            if (count <= 0) {
                if (count < 0) *why = "it cannot be read";
                break;
            }
            have += (size_t)count;
            if (have > LOGIN_LIMITS_FILE_MAX) {
                *why = "it is larger than 1 MiB";
                break;
            }
        }
        if (*why) {
            free(bytes);
            bytes = NULL;
        } else {
            *length = have;
        }
    }
    close(fd);
    return bytes;
}

/* Finds uid's line. Returns 1 found, 0 none, -1 the file is not a limits file
 * (*why). Damaged lines are counted, the first one's number and reason kept. */
static int find_limits(const char *bytes, size_t length, unsigned long uid, struct login_limits *limits,
                       const char **why, int *damaged, int *first_damaged, const char **first_why) {
    *damaged = 0;
    int found = 0, number = 0;
    const char *p = bytes, *end = bytes + length;
    while (p < end) {
        const char *newline = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = newline ? newline : end;
        size_t size = (size_t)(line_end - p);
        number++;
        if (number == 1) {
            if (!newline || size != strlen(LOGIN_LIMITS_HEADER) || memcmp(p, LOGIN_LIMITS_HEADER, size) != 0) {
                *why = "it does not start with \"" LOGIN_LIMITS_HEADER "\"";
                return -1;
            }
        } else if (size > 0 && p[0] == '#') {
            /* a comment */
        } else {
            struct login_limits line;
            const char *problem = NULL;
            if (!newline) problem = "cut short (no end of line)";
            else if (login_limits_parse_line(p, size, &line, &problem) == 0 && line.uid == uid && found)
                problem = "a second line for the same uid";
            if (problem) {
                if ((*damaged)++ == 0) {
                    *first_damaged = number;
                    *first_why = problem;
                }
            } else if (line.uid == uid) {
                *limits = line;
                found = 1;
            }
        }
        p = newline ? newline + 1 : end;
    }
    if (number == 0) {
        *why = "it is empty";
        return -1;
    }
    return found;
}

/* The app names as a terminal may show them: valid UTF-8 without control
 * characters (C0, DEL, C1); a control character, an overlong form or a
 * surrogate shows as one '?', each byte that is not UTF-8 as one '?'. Cut
 * after NAMES_SHOWN_MAX bytes. */
static void shown_names(const char *names, size_t length, char *out, size_t capacity) {
    size_t count = 0;
    const unsigned char *p = (const unsigned char *)names, *end = p + length;
    while (p < end && count + 5 < capacity && count < NAMES_SHOWN_MAX) {
        size_t width = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;
        int formed = width > 0 && (size_t)(end - p) >= width;
        for (size_t i = 1; formed && i < width; i++) formed = (p[i] & 0xc0) == 0x80;
        if (!formed) {
            out[count++] = '?';
            p++;
            continue;
        }
        int shown = !(width == 1 && (*p < 0x20 || *p == 0x7f)) &&
                    !(width == 2 && (*p < 0xc2 || (*p == 0xc2 && p[1] < 0xa0))) &&
                    !(width == 3 && ((*p == 0xe0 && p[1] < 0xa0) || (*p == 0xed && p[1] >= 0xa0))) &&
                    !(width == 4 && ((*p == 0xf0 && p[1] < 0x90) || *p > 0xf4 || (*p == 0xf4 && p[1] >= 0x90)));
        if (shown) {
            memcpy(out + count, p, width);
            count += width;
        } else {
            out[count++] = '?';
        }
        p += width;
    }
    if (p < end) {
        memcpy(out + count, "...", 3);
        count += 3;
    }
    out[count] = '\0';
}

static const char *const weekdays[] = { "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday" };

/* "at 07:30", "at 07:30 on Monday", "tomorrow at 07:30", "at 07:30 on Monday next week". */
static void when_again(const struct login_next *next, char *out, size_t capacity) {
    int hours = next->minute / 60, minutes = next->minute % 60;
    if (next->days_ahead == 0) snprintf(out, capacity, "at %02d:%02d", hours, minutes);
    else if (next->days_ahead == 1) snprintf(out, capacity, "tomorrow at %02d:%02d", hours, minutes);
    else snprintf(out, capacity, "at %02d:%02d on %s%s", hours, minutes, weekdays[next->weekday],
                  next->days_ahead == 7 ? " next week" : "");
}

static void tell_child(pam_handle_t *pamh, int flags, const char *user, enum login_verdict verdict,
                       const struct login_limits *limits, const struct login_next *next) {
    char names[NAMES_SHOWN_MAX + 8], when[64], again[128], message[MESSAGE_MAX];
    shown_names(limits->names, limits->names_length, names, sizeof names);
    if (next->found) {
        when_again(next, when, sizeof when);
        snprintf(again, sizeof again, "You may log in again %s.", when);
    } else {
        snprintf(again, sizeof again, "Your login hours allow no day of the week.");
    }
    const char *what = verdict == LOGIN_OUTSIDE_HOURS ? "You may not log in at this hour" : "Your time for today is used up";
    const char *set = verdict == LOGIN_OUTSIDE_HOURS ? "your login hours" : "your daily time";
    snprintf(message, sizeof message,
             "%s: %s set %s.\n%s\nA parent or guardian can give you more time with: familyctl limits more --user %s",
             what, names, set, again, user);
    pam_syslog(pamh, LOG_NOTICE, "refused the login of %s (uid %lu): %s (%s set %s)", user, limits->uid,
               verdict == LOGIN_OUTSIDE_HOURS ? "outside the login hours" : "the day's time is used up", names, set);
    if (!(flags & PAM_SILENT)) pam_error(pamh, "%s", message);
}

PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    const char *user = NULL;
    if (pam_get_item(pamh, PAM_USER, (const void **)&user) != PAM_SUCCESS || !user || !*user) return PAM_IGNORE;
    if (strcmp(user, "root") == 0) return PAM_IGNORE;
    uid_t uid = 0;
    int lookup = lookup_uid(user, &uid);
    if (lookup < 0) pam_syslog(pamh, LOG_WARNING, "login limits not applied to %s: the account cannot be looked up", user);
    if (lookup != 0 || uid == 0) return PAM_IGNORE;

    struct account_options options;
    parse_account_options(pamh, argc, argv, &options);
    size_t length = 0;
    const char *why = NULL;
    int missing = 0;
    char *bytes = read_limits(options.limits, &length, &why, &missing);
    if (!bytes) {
        pam_syslog(pamh, missing ? LOG_INFO : LOG_WARNING, "login limits not applied to %s: %s: %s", user,
                   options.limits, why);
        return PAM_IGNORE;
    }
    struct login_limits *limits = malloc(sizeof *limits);
    if (!limits) {
        free(bytes);
        return PAM_IGNORE;
    }
    int damaged = 0, first_damaged = 0;
    const char *first_why = NULL;
    int found = find_limits(bytes, length, (unsigned long)uid, limits, &why, &damaged, &first_damaged, &first_why);
    int status = PAM_IGNORE;
    if (found < 0) {
        pam_syslog(pamh, LOG_WARNING, "login limits not applied to %s: %s is ignored, %s", user, options.limits, why);
    } else {
        if (damaged) {
            pam_syslog(pamh, LOG_WARNING, "%s: ignored %d damaged line%s (line %d: %s)", options.limits, damaged,
                       damaged == 1 ? "" : "s", first_damaged, first_why);
        }
        struct login_now now;
        struct login_next next;
        if (found == 1 && machine_now(&now) != 0) {
            pam_syslog(pamh, LOG_WARNING, "login limits not applied to %s: the local time is unknown", user);
        } else if (found == 1) {
            enum login_verdict verdict = login_limits_decide(limits, &now, &next);
            if (verdict == LOGIN_ALLOWED) {
                status = PAM_SUCCESS;
                if (options.debug) pam_syslog(pamh, LOG_DEBUG, "%s is within the login limits", user);
            } else {
                tell_child(pamh, flags, user, verdict, limits, &next);
                status = PAM_PERM_DENIED;
            }
        }
    }
    /* The line points into bytes, which may hold whatever the file did: gone with them. */
    free(limits);
    free(bytes);
    return status;
}
