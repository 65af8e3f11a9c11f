#ifndef CSDLOGIN_H
#define CSDLOGIN_H

/*
 * The login sessions systemd-logind keeps, read through libsystemd's
 * sd-login (sd-login(3)): a maintained library over logind's own state in
 * /run/systemd, not a parser of ours. sd-login hands out strings and arrays
 * the caller must free; this shim copies one snapshot of every session into
 * plain structs, frees what sd-login returned on every way out, and hides
 * the monitor (sd_login_monitor_new(3)) behind one opaque handle.
 *
 * No global state. Functions return 0 (or a count) or a negative errno, as
 * sd-login does.
 */

#ifdef __linux__
#include <stdint.h>

/// One session as logind recorded it; a string is NULL when logind has none.
typedef struct csdlogin_session {
    char *id;
    uint32_t uid;
    /// "online", "active" or "closing" (sd_session_get_state).
    char *state;
    /// "user", "greeter", "lock-screen", "background"… (sd_session_get_class).
    char *session_class;
    /// "tty", "x11", "wayland", "mir", "unspecified" (sd_session_get_type).
    char *type;
    /// The PAM service (sd_session_get_service).
    char *service;
    char *tty;
    /// The X11 display (sd_session_get_display).
    char *display;
    /// The session's leader (sd_session_get_leader), 0 when not known.
    int32_t leader;
    /// When it started, in microseconds of CLOCK_REALTIME
    /// (sd_session_get_start_time), 0 when not known.
    uint64_t started_usec;
} csdlogin_session;

/// Whether systemd-logind runs, as sd-login(3) says to check: the system
/// was booted with systemd (sd_booted(3)) and /run/systemd/seats/ exists.
int csdlogin_is_running(void);

/// Whether this libsystemd reports sessions' leaders (sd_session_get_leader,
/// which libsystemd 252 lacks).
int csdlogin_reads_leaders(void);

/// Whether this libsystemd reports when sessions started
/// (sd_session_get_start_time, which libsystemd 252 lacks).
int csdlogin_reads_start_times(void);

/// Every session logind has now (sd_get_sessions(3)), each read once. A
/// session whose uid, state or class cannot be read (it ended meanwhile, or
/// its file is damaged) is left out.
/// - Returns: the number of sessions in *out (freed with
///   csdlogin_sessions_free), or a negative errno; *out is NULL for none.
int csdlogin_sessions(csdlogin_session **out);

/// Frees the sessions csdlogin_sessions returned.
void csdlogin_sessions_free(csdlogin_session *sessions, int count);

/// Watches logind's sessions (sd_login_monitor_new(3), category "session").
typedef struct csdlogin_monitor csdlogin_monitor;

/// - Returns: 0, or a negative errno (no inotify, no /run/systemd/sessions).
int csdlogin_monitor_new(csdlogin_monitor **out);

void csdlogin_monitor_free(csdlogin_monitor *monitor);

/// The descriptor poll(2) finds readable when sessions changed
/// (sd_login_monitor_get_fd), or a negative errno.
int csdlogin_monitor_fd(csdlogin_monitor *monitor);

/// The events to poll for (sd_login_monitor_get_events), or a negative errno.
int csdlogin_monitor_events(csdlogin_monitor *monitor);

/// How long to wait at most from now, in milliseconds rounded up, or -1 for
/// no limit (sd_login_monitor_get_timeout, whose failure reads as none).
int csdlogin_monitor_timeout_ms(csdlogin_monitor *monitor);

/// Acknowledges the changes seen (sd_login_monitor_flush).
/// - Returns: 0, or a negative errno.
int csdlogin_monitor_flush(csdlogin_monitor *monitor);

#endif
#endif
