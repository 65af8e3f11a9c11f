#ifndef PAM_FAMILYCONTROLS_LOGIN_LIMITS_H
#define PAM_FAMILYCONTROLS_LOGIN_LIMITS_H

/* The login-limits state file the Guard writes and the account phase reads
 * (docs/design/login-limits.md): one child's line read strictly, and the
 * decision for a moment of the machine's local time. No I/O here. */

#include <stddef.h>
#include <time.h>

#define LOGIN_LIMITS_HEADER "familycontrols-login-limits 1"
#define LOGIN_LIMITS_FILE_MAX (1024 * 1024)
#define LOGIN_LIMITS_LINE_MAX 4096
#define LOGIN_LIMITS_DAYS 7
#define LOGIN_LIMITS_RANGES 32
/* USED, DAILY and EXTRA: seconds, at most this (no sum can overflow). */
#define LOGIN_LIMITS_SECONDS_MAX 2147483647LL
/* OPEN_UNTIL: unix seconds, at most 12 digits. */
#define LOGIN_LIMITS_INSTANT_MAX 999999999999LL

struct login_range {
    int start, end; /* minutes of the day, start inclusive, end exclusive */
};

struct login_limits {
    unsigned long uid;
    int year, month, day;
    long long used, daily, extra; /* daily: -1 when there is no daily limit */
    int has_windows;
    int counts[LOGIN_LIMITS_DAYS]; /* Monday first */
    struct login_range ranges[LOGIN_LIMITS_DAYS][LOGIN_LIMITS_RANGES];
    long long open_until;
    const char *names; /* into the line read; not NUL-terminated */
    size_t names_length;
};

/* Reads one `child` line (without its "\n"). Returns 0 and fills limits, or
 * -1 with *why saying what is wrong with it. */
__attribute__((visibility("hidden"))) int login_limits_parse_line(const char *line, size_t length, struct login_limits *limits, const char **why);

/* The moment decided for, in the machine's local time. */
struct login_now {
    time_t seconds;
    int year, month, day;
    int weekday; /* 0 Monday ... 6 Sunday */
    int minute;  /* of the day */
};

enum login_verdict { LOGIN_ALLOWED, LOGIN_OUTSIDE_HOURS, LOGIN_TIME_USED_UP };

/* When the child may log in again: days after today (0 today), the weekday
 * and the minute of that day; found is 0 when no day has any hours. */
struct login_next {
    int found;
    int days_ahead;
    int weekday;
    int minute;
};

__attribute__((visibility("hidden"))) enum login_verdict login_limits_decide(const struct login_limits *limits, const struct login_now *now,
                                       struct login_next *next);

/* What reading the file for one uid came to. */
enum login_limits_scan {
    LOGIN_LIMITS_FOUND,     /* the uid's line, in *limits */
    LOGIN_LIMITS_NONE,      /* no line for the uid */
    LOGIN_LIMITS_IGNORED,   /* the file is missing, not to be trusted or not a limits file: why */
    LOGIN_LIMITS_UNCHECKED, /* this process is out of memory or descriptors: why */
};

struct login_limits_report {
    const char *why;
    int missing;
    int damaged;       /* damaged lines skipped */
    int first_damaged; /* the first one's number, and why */
    const char *first_why;
};

/* Opens path (not following a final symbolic link), checks it is a regular
 * file of root's that no one else may write, of at most 1 MiB, and reads it
 * a line at a time through a fixed buffer (no allocation) for uid's line.
 * The line's NAMES are copied into names (capacity at least
 * LOGIN_LIMITS_LINE_MAX), which limits->names then points to. */
__attribute__((visibility("hidden"))) enum login_limits_scan
login_limits_scan(const char *path, unsigned long uid, struct login_limits *limits, char *names, size_t capacity,
                  struct login_limits_report *report);

/* Now in the machine's local time (/etc/localtime), whatever TZ the caller
 * set. Returns 0, or -1 when it cannot be known here (out of memory or
 * descriptors, or the zone could not be loaded and the C library fell back
 * to UTC), with *why. */
__attribute__((visibility("hidden"))) int login_limits_machine_now(struct login_now *now, const char **why);

#endif
