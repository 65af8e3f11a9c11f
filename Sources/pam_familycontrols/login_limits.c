/*
 * The login-limits state file's `child` line, read strictly, and the
 * account decision (docs/design/login-limits.md). Every field is checked
 * for its form and its range; a line that is wrong anywhere is refused
 * whole, so a damaged line never limits anyone by half.
 */
#include "login_limits.h"

#include <string.h>

/* A cursor over one line. */
struct cursor {
    const char *p, *end;
};

/* The next field: the bytes up to the next space (or the end), which must
 * be followed by one space unless last. Returns its length, or 0. */
static size_t field(struct cursor *c, const char **start, int last) {
    *start = c->p;
    while (c->p < c->end && *c->p != ' ') c->p++;
    size_t length = (size_t)(c->p - *start);
    if (last) return c->p == c->end ? length : 0;
    if (c->p >= c->end) return 0;
    c->p++; /* the one space */
    return length;
}

/* A decimal number of at most `digits` digits, no sign, no leading zero, at most max. */
static int number(const char *text, size_t length, size_t digits, long long max, long long *value) {
    if (length == 0 || length > digits || (length > 1 && text[0] == '0')) return -1;
    long long result = 0;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9') return -1;
        result = result * 10 + (text[i] - '0');
    }
    if (result > max) return -1;
    *value = result;
    return 0;
}

static int two_digits(const char *text) {
    if (text[0] < '0' || text[0] > '9' || text[1] < '0' || text[1] > '9') return -1;
    return (text[0] - '0') * 10 + (text[1] - '0');
}

static int days_in_month(int year, int month) {
    static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

static int date(const char *text, size_t length, struct login_limits *limits) {
    if (length != 10 || text[4] != '-' || text[7] != '-') return -1;
    int high = two_digits(text), low = two_digits(text + 2);
    int month = two_digits(text + 5), day = two_digits(text + 8);
    if (high < 0 || low < 0 || month < 1 || month > 12 || day < 1) return -1;
    int year = high * 100 + low;
    if (year < 1970 || day > days_in_month(year, month)) return -1;
    limits->year = year;
    limits->month = month;
    limits->day = day;
    return 0;
}

/* HHMM, 0000 to 2400, as minutes. */
static int clock_time(const char *text) {
    int hours = two_digits(text), minutes = two_digits(text + 2);
    if (hours < 0 || minutes < 0 || minutes > 59 || hours > 24 || (hours == 24 && minutes != 0)) return -1;
    return hours * 60 + minutes;
}

/* One day's group: `none`, or HHMM-HHMM ranges joined by `,`, ascending, not overlapping. */
static int day_group(const char *text, size_t length, int day, struct login_limits *limits) {
    limits->counts[day] = 0;
    if (length == 4 && memcmp(text, "none", 4) == 0) return 0;
    const char *p = text, *end = text + length;
    int previous_end = 0;
    for (;;) {
        if (end - p < 9 || p[4] != '-' || limits->counts[day] == LOGIN_LIMITS_RANGES) return -1;
        int start = clock_time(p), stop = clock_time(p + 5);
        if (start < 0 || stop < 0 || start >= stop || start < previous_end) return -1;
        limits->ranges[day][limits->counts[day]++] = (struct login_range){ start, stop };
        previous_end = stop;
        p += 9;
        if (p == end) return 0;
        if (*p != ',') return -1;
        p++;
    }
}

static int windows(const char *text, size_t length, struct login_limits *limits) {
    limits->has_windows = !(length == 1 && text[0] == '-');
    if (!limits->has_windows) return 0;
    const char *p = text, *end = text + length;
    for (int day = 0; day < LOGIN_LIMITS_DAYS; day++) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        const char *group_end = slash ? slash : end;
        if ((day < LOGIN_LIMITS_DAYS - 1) != (slash != NULL)) return -1;
        if (day_group(p, (size_t)(group_end - p), day, limits) != 0) return -1;
        p = group_end + (slash ? 1 : 0);
    }
    return 0;
}

int login_limits_parse_line(const char *line, size_t length, struct login_limits *limits, const char **why) {
    memset(limits, 0, sizeof *limits);
    if (length > LOGIN_LIMITS_LINE_MAX) {
        *why = "longer than 4096 bytes";
        return -1;
    }
    if (memchr(line, '\0', length)) {
        *why = "a NUL byte";
        return -1;
    }
    struct cursor c = { line, line + length };
    const char *text;
    size_t size;
    long long value;
    if (field(&c, &text, 0) != 5 || memcmp(text, "child", 5) != 0) {
        *why = "not a child line";
        return -1;
    }
    size = field(&c, &text, 0);
    if (number(text, size, 10, 4294967294LL, &value) != 0) {
        *why = "a bad UID";
        return -1;
    }
    limits->uid = (unsigned long)value;
    size = field(&c, &text, 0);
    if (date(text, size, limits) != 0) {
        *why = "a bad DAY";
        return -1;
    }
    size = field(&c, &text, 0);
    if (number(text, size, 10, LOGIN_LIMITS_SECONDS_MAX, &limits->used) != 0) {
        *why = "a bad USED";
        return -1;
    }
    size = field(&c, &text, 0);
    if (size == 1 && text[0] == '-') {
        limits->daily = -1;
    } else if (number(text, size, 10, LOGIN_LIMITS_SECONDS_MAX, &limits->daily) != 0) {
        *why = "a bad DAILY";
        return -1;
    }
    size = field(&c, &text, 0);
    if (number(text, size, 10, LOGIN_LIMITS_SECONDS_MAX, &limits->extra) != 0) {
        *why = "a bad EXTRA";
        return -1;
    }
    size = field(&c, &text, 0);
    if (size == 0 || windows(text, size, limits) != 0) {
        *why = "bad WINDOWS";
        return -1;
    }
    size = field(&c, &text, 0);
    if (number(text, size, 12, LOGIN_LIMITS_INSTANT_MAX, &limits->open_until) != 0) {
        *why = "a bad OPEN_UNTIL";
        return -1;
    }
    /* NAMES: the rest of the line, spaces and all; shown sanitized, never refused for its bytes. */
    if (c.p >= c.end) {
        *why = "no NAMES";
        return -1;
    }
    limits->names = c.p;
    limits->names_length = (size_t)(c.end - c.p);
    return 0;
}

static int in_range(const struct login_limits *limits, int day, int minute) {
    for (int i = 0; i < limits->counts[day]; i++) {
        if (minute >= limits->ranges[day][i].start && minute < limits->ranges[day][i].end) return 1;
    }
    return 0;
}

/* The first range that starts at or after `from` minutes on the day `days_ahead`
 * after today, or, from the next day on, the first range of each day. */
static void next_start(const struct login_limits *limits, const struct login_now *now, int first_day, int from,
                       struct login_next *next) {
    next->found = 0;
    for (int ahead = first_day; ahead <= LOGIN_LIMITS_DAYS; ahead++) {
        int day = (now->weekday + ahead) % LOGIN_LIMITS_DAYS;
        for (int i = 0; i < limits->counts[day]; i++) {
            if (ahead == first_day && limits->ranges[day][i].start < from) continue;
            *next = (struct login_next){ 1, ahead, day, limits->ranges[day][i].start };
            return;
        }
        from = 0;
    }
}

enum login_verdict login_limits_decide(const struct login_limits *limits, const struct login_now *now,
                                       struct login_next *next) {
    *next = (struct login_next){ 0, 0, 0, 0 };
    if (limits->has_windows && (long long)now->seconds >= limits->open_until &&
        !in_range(limits, now->weekday, now->minute)) {
        next_start(limits, now, 0, now->minute + 1, next);
        return LOGIN_OUTSIDE_HOURS;
    }
    int today = limits->year == now->year && limits->month == now->month && limits->day == now->day;
    if (limits->daily >= 0 && today && limits->used >= limits->daily + limits->extra) {
        if (limits->has_windows) {
            next_start(limits, now, 1, 0, next);
        } else {
            *next = (struct login_next){ 1, 1, (now->weekday + 1) % LOGIN_LIMITS_DAYS, 0 };
        }
        return LOGIN_TIME_USED_UP;
    }
    return LOGIN_ALLOWED;
}
