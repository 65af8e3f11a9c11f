#include "CSDLogin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>

/* Newer than the libsystemd this builds against on some systems (252 has
 * neither). Declared weak, so a build against an older library links, and a
 * program run with a newer one uses them: bound by the dynamic linker at
 * start, never looked up by name. */
extern int sd_session_get_leader(const char *session, pid_t *leader) __attribute__((weak));
extern int sd_session_get_start_time(const char *session, uint64_t *usec) __attribute__((weak));

struct csdlogin_monitor {
    sd_login_monitor *monitor;
};

int csdlogin_is_running(void) {
    return sd_booted() > 0 && access("/run/systemd/seats/", F_OK) == 0;
}

int csdlogin_reads_leaders(void) {
    return sd_session_get_leader != NULL;
}

int csdlogin_reads_start_times(void) {
    return sd_session_get_start_time != NULL;
}

static void session_clear(csdlogin_session *session) {
    free(session->id);
    free(session->state);
    free(session->session_class);
    free(session->type);
    free(session->service);
    free(session->tty);
    free(session->display);
    memset(session, 0, sizeof *session);
}

/* An optional string: NULL when logind recorded none (-ENXIO, -ENODATA) or
 * it cannot be read. */
static char *optional(int (*get)(const char *, char **), const char *id) {
    char *value = NULL;
    if (get(id, &value) < 0) {
        free(value);
        return NULL;
    }
    return value;
}

/* Reads one session into *session, taking ownership of id.
 * Returns 0, or a negative errno when a required field cannot be read. */
static int session_read(const char *id, csdlogin_session *session) {
    memset(session, 0, sizeof *session);
    session->id = strdup(id);
    if (session->id == NULL) return -ENOMEM;
    uid_t uid = 0;
    int r = sd_session_get_uid(id, &uid);
    if (r < 0) goto fail;
    session->uid = (uint32_t)uid;
    r = sd_session_get_state(id, &session->state);
    if (r < 0 || session->state == NULL) goto fail;
    r = sd_session_get_class(id, &session->session_class);
    if (r < 0 || session->session_class == NULL) goto fail;
    session->type = optional(sd_session_get_type, id);
    session->service = optional(sd_session_get_service, id);
    session->tty = optional(sd_session_get_tty, id);
    session->display = optional(sd_session_get_display, id);
    if (sd_session_get_leader != NULL) {
        pid_t leader = 0;
        if (sd_session_get_leader(id, &leader) >= 0 && leader > 0) session->leader = (int32_t)leader;
    }
    if (sd_session_get_start_time != NULL) {
        uint64_t usec = 0;
        if (sd_session_get_start_time(id, &usec) >= 0) session->started_usec = usec;
    }
    return 0;
fail:
    session_clear(session);
    return r < 0 ? r : -ENODATA;
}

int csdlogin_sessions(csdlogin_session **out) {
    *out = NULL;
    char **ids = NULL;
    int count = sd_get_sessions(&ids);
    if (count < 0) return count;
    if (count == 0 || ids == NULL) {
        free(ids);
        return 0;
    }
    csdlogin_session *sessions = calloc((size_t)count, sizeof *sessions);
    if (sessions == NULL) {
        for (int i = 0; i < count; i++) free(ids[i]);
        free(ids);
        return -ENOMEM;
    }
    int kept = 0;
    int failure = 0;
    for (int i = 0; i < count; i++) {
        int r = ids[i] == NULL ? -EINVAL : session_read(ids[i], &sessions[kept]);
        if (r == 0) kept += 1;
        else if (r == -ENOMEM) failure = r;
        free(ids[i]);
    }
    free(ids);
    if (failure != 0) {
        csdlogin_sessions_free(sessions, kept);
        return failure;
    }
    if (kept == 0) {
        free(sessions);
        return 0;
    }
    *out = sessions;
    return kept;
}

void csdlogin_sessions_free(csdlogin_session *sessions, int count) {
    if (sessions == NULL) return;
    for (int i = 0; i < count; i++) session_clear(&sessions[i]);
    free(sessions);
}

int csdlogin_monitor_new(csdlogin_monitor **out) {
    *out = NULL;
    csdlogin_monitor *monitor = calloc(1, sizeof *monitor);
    if (monitor == NULL) return -ENOMEM;
    int r = sd_login_monitor_new("session", &monitor->monitor);
    if (r < 0) {
        free(monitor);
        return r;
    }
    *out = monitor;
    return 0;
}

void csdlogin_monitor_free(csdlogin_monitor *monitor) {
    if (monitor == NULL) return;
    sd_login_monitor_unref(monitor->monitor);
    free(monitor);
}

int csdlogin_monitor_fd(csdlogin_monitor *monitor) {
    return sd_login_monitor_get_fd(monitor->monitor);
}

int csdlogin_monitor_events(csdlogin_monitor *monitor) {
    return sd_login_monitor_get_events(monitor->monitor);
}

int csdlogin_monitor_timeout_ms(csdlogin_monitor *monitor) {
    uint64_t usec = UINT64_MAX;
    if (sd_login_monitor_get_timeout(monitor->monitor, &usec) < 0 || usec == UINT64_MAX) return -1;
    /* sd-login gives a CLOCK_MONOTONIC instant; poll(2) takes the time left until it. */
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) < 0) return -1;
    uint64_t current = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
    if (usec <= current) return 0;
    uint64_t left = (usec - current + 999u) / 1000u;
    return left > (uint64_t)INT32_MAX ? INT32_MAX : (int)left;
}

int csdlogin_monitor_flush(csdlogin_monitor *monitor) {
    return sd_login_monitor_flush(monitor->monitor);
}
