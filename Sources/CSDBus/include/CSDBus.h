#ifndef CSDBUS_H
#define CSDBUS_H

/*
 * Desktop notifications (org.freedesktop.Notifications, the Desktop
 * Notifications Specification 1.2) on the user's session bus, through
 * libsystemd's sd-bus (sd-bus(3)): a maintained D-Bus library, not a wire
 * protocol of our own. The functions sd-bus offers for messages are
 * variadic, which Swift cannot call, so this shim builds and reads the few
 * messages the agent needs and hides sd-bus behind one opaque handle.
 *
 * No global state: everything lives in the handle, which one thread owns
 * (sd-bus connections are not thread-safe). Functions return 0 or a
 * negative errno, as sd-bus does.
 */

#ifdef __linux__
#include <stdint.h>

/// The connection, the server's unique name, and the signals heard.
typedef struct csdbus_notifier csdbus_notifier;

/// What the notification server said (`ActionInvoked`, `NotificationClosed`).
typedef enum csdbus_event_kind {
    CSDBUS_EVENT_ACTION = 1,
    CSDBUS_EVENT_CLOSED = 2,
} csdbus_event_kind;

/// The longest action key kept; a longer one is dropped (ours are "approve" and "deny").
#define CSDBUS_ACTION_MAX 32

typedef struct csdbus_event {
    csdbus_event_kind kind;
    uint32_t id;
    /// For CLOSED: the reason (1 expired, 2 dismissed, 3 closed by a call, 4 other).
    uint32_t reason;
    /// For ACTION: the action's key, NUL-terminated.
    char action[CSDBUS_ACTION_MAX];
} csdbus_event;

/// Connects to the session bus (`sd_bus_open_user`: $DBUS_SESSION_BUS_ADDRESS,
/// else $XDG_RUNTIME_DIR/bus), asks the bus to start the notification server
/// if one is activatable, and records the unique name that owns
/// org.freedesktop.Notifications; signals are accepted from it alone.
/// - Returns: 0; -ENOMEDIUM when no session bus could be reached; -ESRCH when
///   nobody owns the name; another negative errno otherwise.
int csdbus_notifier_open(csdbus_notifier **out, int timeout_ms);

/// Closes the connection and frees the handle.
void csdbus_notifier_free(csdbus_notifier *notifier);

/// The unique bus name of the server the handle listens to (":1.42").
const char *csdbus_notifier_owner(const csdbus_notifier *notifier);

/// `Notify`: app name "FamilyControls", the actions "approve"/"Approve" and
/// "deny"/"Deny" when `with_actions`, never expiring when `persistent`.
/// `summary` is plain text, `body` may be read as markup by the server:
/// the caller escapes it. Sets `*id` to the server's notification id.
int csdbus_notify(csdbus_notifier *notifier, uint32_t replaces_id, const char *summary, const char *body,
                  int with_actions, int persistent, uint32_t *id);

/// `CloseNotification(id)`.
int csdbus_close_notification(csdbus_notifier *notifier, uint32_t id);

/// Waits until the bus or `extra_fd` (-1 for none) has something, or
/// `timeout_ms` (-1 for ever) passed (`poll(2)` with sd-bus's events and
/// timeout), then processes what arrived.
/// - Returns: 0; a negative errno when the bus connection ended.
int csdbus_notifier_wait(csdbus_notifier *notifier, int extra_fd, int timeout_ms);

/// Takes the oldest signal heard: 1 and `*event` filled, or 0 when none.
int csdbus_next_event(csdbus_notifier *notifier, csdbus_event *event);

/*
 * systemd-logind's Manager (org.freedesktop.login1, logind(8)'s D-Bus API)
 * on the system bus: the calls the Guard makes to lock or end a login
 * session. One handle, owned by one thread; a session is named by logind's
 * id ("3", "c2"). Functions return 0 (or a value) or a negative errno:
 * -ENXIO when logind knows no such session (org.freedesktop.login1.NoSuchSession),
 * -ECONNREFUSED or -ENOENT when the system bus cannot be reached,
 * -EACCES when the bus or logind refused the caller.
 */

/// A connection to the system bus for logind's calls.
typedef struct csdbus_logind csdbus_logind;

/// Connects to the system bus (`sd_bus_open_system`:
/// $DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket); each method
/// call waits at most `timeout_ms`.
int csdbus_logind_open(csdbus_logind **out, int timeout_ms);

/// Closes the connection and frees the handle.
void csdbus_logind_free(csdbus_logind *logind);

/// `org.freedesktop.login1.Manager.LockSession(s id)`: logind sends the
/// session's `Lock` signal, which its screen locker acts on.
int csdbus_logind_lock_session(csdbus_logind *logind, const char *id);

/// `org.freedesktop.login1.Manager.TerminateSession(s id)`: logind stops
/// the session's scope, every process in it.
int csdbus_logind_terminate_session(csdbus_logind *logind, const char *id);

/// The session's `LockedHint` property (set by its screen locker through
/// `SetLockedHint`): 1 or 0, or a negative errno.
int csdbus_logind_locked_hint(csdbus_logind *logind, const char *id);

/// The session's `Leader` property: the pid of the process that opened it,
/// or a negative errno.
int csdbus_logind_leader(csdbus_logind *logind, const char *id);

#endif
#endif
