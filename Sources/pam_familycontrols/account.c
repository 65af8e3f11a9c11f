/*
 * pam_familycontrols.so's account phase: login hours and daily time, kept
 * at login from the state the Guard last wrote (docs/design/login-limits.md).
 *
 *   account [success=ok ignore=ignore perm_denied=bad default=ignore] pam_familycontrols.so [limits=PATH] [debug]
 *
 * It refuses (PAM_PERM_DENIED) a child whose line in the file says so, and
 * tells them why. Root is let through before any file is opened; every
 * other user without a line, and everyone when the file is missing, damaged
 * or not root's alone, gets PAM_IGNORE: a fault of the file never refuses a
 * login. What this process itself lacks (memory, descriptors, the machine's
 * time zone) refuses everyone but root: a child can start su with limits of
 * their choosing, so nothing here allocates what it can keep on the stack.
 * It never connects to the Guard and never waits.
 */
#define _GNU_SOURCE
#include "pam_familycontrols.h"
#include "login_limits.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

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

/* The uid of `user`: 0 found, 1 no such account, -1 the lookup failed, -2
 * this process is out of memory or descriptors. A buffer on the stack first:
 * a child may start su with a memory limit of their choosing. */
static int lookup_uid(const char *user, uid_t *uid) {
    char small[16384];
    char *buffer = small;
    size_t size = sizeof small;
    for (;;) {
        struct passwd entry, *found = NULL;
        int error = getpwnam_r(user, &entry, buffer, size, &found);
        if (found) *uid = entry.pw_uid;
        if (buffer != small) free(buffer);
        if (found) return 0;
        if (error == ERANGE && size < (1 << 20)) {
            size *= 2;
            buffer = malloc(size);
            if (!buffer) return -2;
            continue;
        }
        if (error == 0 || error == ENOENT || error == ESRCH) return 1;
        return error == ENOMEM || error == EMFILE || error == ENFILE || error == ERANGE ? -2 : -1;
    }
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

/* A login that cannot be checked because this process is starved: refused,
 * for everyone but root, as a child could starve su on purpose. */
static int unchecked(pam_handle_t *pamh, int flags, const char *user, const char *why) {
    pam_syslog(pamh, LOG_WARNING, "refused the login of %s: its login limits cannot be checked: %s", user, why);
    if (!(flags & PAM_SILENT)) {
        pam_error(pamh, "Your login cannot be checked against your login hours and daily time right now. Try again.");
    }
    return PAM_PERM_DENIED;
}

PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    const char *user = NULL;
    if (pam_get_item(pamh, PAM_USER, (const void **)&user) != PAM_SUCCESS || !user || !*user) return PAM_IGNORE;
    if (strcmp(user, "root") == 0) return PAM_IGNORE;
    uid_t uid = 0;
    int lookup = lookup_uid(user, &uid);
    if (lookup == 0 && uid == 0) return PAM_IGNORE;
    if (lookup == -2) return unchecked(pamh, flags, user, "the account cannot be looked up (out of memory or descriptors)");
    if (lookup < 0) pam_syslog(pamh, LOG_WARNING, "login limits not applied to %s: the account cannot be looked up", user);
    if (lookup != 0) return PAM_IGNORE;

    struct account_options options;
    parse_account_options(pamh, argc, argv, &options);
    struct login_limits limits;
    struct login_limits_report report;
    char names[LOGIN_LIMITS_LINE_MAX];
    enum login_limits_scan scanned = login_limits_scan(options.limits, (unsigned long)uid, &limits, names, sizeof names, &report);
    switch (scanned) {
    case LOGIN_LIMITS_UNCHECKED:
        return unchecked(pamh, flags, user, report.why);
    case LOGIN_LIMITS_IGNORED:
        pam_syslog(pamh, report.missing ? LOG_INFO : LOG_WARNING, "login limits not applied to %s: %s: %s", user,
                   options.limits, report.why);
        return PAM_IGNORE;
    case LOGIN_LIMITS_NONE:
    case LOGIN_LIMITS_FOUND:
        break;
    }
    if (report.damaged) {
        pam_syslog(pamh, LOG_WARNING, "%s: ignored %d damaged line%s (line %d: %s)", options.limits, report.damaged,
                   report.damaged == 1 ? "" : "s", report.first_damaged, report.first_why);
    }
    if (scanned != LOGIN_LIMITS_FOUND) return PAM_IGNORE; /* no line for this user */

    struct login_now now;
    const char *why = NULL;
    if (login_limits_machine_now(&now, &why) != 0) return unchecked(pamh, flags, user, why);
    struct login_next next;
    enum login_verdict verdict = login_limits_decide(&limits, &now, &next);
    if (verdict == LOGIN_ALLOWED) {
        if (options.debug) pam_syslog(pamh, LOG_DEBUG, "%s is within the login limits", user);
        return PAM_SUCCESS;
    }
    tell_child(pamh, flags, user, verdict, &limits, &next);
    return PAM_PERM_DENIED;
}
