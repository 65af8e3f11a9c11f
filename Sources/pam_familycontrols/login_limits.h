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

#endif
