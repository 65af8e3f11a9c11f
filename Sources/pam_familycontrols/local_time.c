/*
 * Now in the machine's local time, as the Guard counts it
 * (login_limits_machine_now). Two ways a child could move the clock the
 * module reads, both closed here:
 *   - su runs with the environment of the user who typed it, and glibc
 *     honours a TZ rule (TZ=UTC-12) even in a set-user-ID program: TZ is set
 *     aside for the conversion and put back. The programs that run the
 *     account phase (login, su, sshd's monitor, a display manager's worker)
 *     do not read the environment from another thread meanwhile.
 *   - when glibc cannot load /etc/localtime (su started with a memory or
 *     descriptor limit of the child's choosing) it quietly uses UTC: the
 *     zone it used is checked against the file.
 */
#define _GNU_SOURCE
#include "login_limits.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZONE_FILE "/etc/localtime"
#define ZONE_FILE_MAX (256 * 1024)

/* Whether the zone file holds the abbreviation `name` (NUL-terminated in
 * its data, as every abbreviation of a TZif file is): 1 yes, 0 no, 2 there
 * is no zone file (glibc's UTC is then right), -1 it cannot be read here. */
static int zone_file_names(const char *name) {
    int fd = open(ZONE_FILE, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return errno == ENOENT ? 2 : -1;
    size_t wanted = strlen(name) + 1; /* with its NUL */
    char buffer[4096];
    size_t kept = 0, total = 0;
    int result = 0;
    for (;;) {
        ssize_t count = read(fd, buffer + kept, sizeof buffer - kept);
        if (count < 0 && errno == EINTR) continue;
        if (count < 0) {
            result = -1;
            break;
        }
        if (count == 0) break;
        total += (size_t)count;
        size_t have = kept + (size_t)count;
        if (memmem(buffer, have, name, wanted)) {
            result = 1;
            break;
        }
        if (total > ZONE_FILE_MAX) break;
        /* Keep the tail, in case the name straddles two reads. */
        kept = have < wanted ? have : wanted - 1;
        memmove(buffer, buffer + have - kept, kept);
    }
    close(fd);
    return result;
}

int login_limits_machine_now(struct login_now *now, const char **why) {
    now->seconds = time(NULL);
    const char *zone = getenv("TZ");
    char saved[512];
    if (zone) {
        if (strlen(zone) >= sizeof saved) {
            *why = "TZ is too long to set aside";
            return -1;
        }
        strcpy(saved, zone);
        unsetenv("TZ");
    }
    tzset();
    struct tm local;
    struct tm *converted = localtime_r(&now->seconds, &local);
    if (zone) {
        int restored = setenv("TZ", saved, 1);
        tzset();
        if (restored != 0) {
            *why = "out of memory";
            return -1;
        }
    }
    if (!converted) {
        *why = "the local time cannot be worked out";
        return -1;
    }
    /* glibc's fallback when it cannot load the zone: "UTC", offset 0. Real
     * only if the zone file says UTC too (or there is none). */
    if (local.tm_gmtoff == 0 && local.tm_zone && strcmp(local.tm_zone, "UTC") == 0 && zone_file_names("UTC") <= 0) {
        *why = "the machine's time zone (" ZONE_FILE ") cannot be loaded";
        return -1;
    }
    now->year = local.tm_year + 1900;
    now->month = local.tm_mon + 1;
    now->day = local.tm_mday;
    now->weekday = (local.tm_wday + 6) % 7;
    now->minute = local.tm_hour * 60 + local.tm_min;
    return 0;
}
