#include "CSDBus.h"

#include <errno.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>

#define LOGIN1_NAME "org.freedesktop.login1"
#define LOGIN1_PATH "/org/freedesktop/login1"
#define LOGIN1_MANAGER "org.freedesktop.login1.Manager"
#define LOGIN1_SESSION "org.freedesktop.login1.Session"

struct csdbus_logind {
    sd_bus *bus;
};

/* The negative errno a failed call means, with logind's "no such session"
 * made -ENXIO whether or not this libsystemd maps logind's error names. */
static int failure(int result, const sd_bus_error *error) {
    if (sd_bus_error_has_name(error, "org.freedesktop.login1.NoSuchSession")) return -ENXIO;
    if (sd_bus_error_has_name(error, SD_BUS_ERROR_ACCESS_DENIED)) return -EACCES;
    return result < 0 ? result : -EIO;
}

int csdbus_logind_open(csdbus_logind **out, int timeout_ms) {
    *out = NULL;
    csdbus_logind *logind = calloc(1, sizeof *logind);
    if (logind == NULL) return -ENOMEM;
    int result = sd_bus_open_system(&logind->bus);
    if (result < 0) {
        free(logind);
        return result;
    }
    (void)sd_bus_set_method_call_timeout(logind->bus, (uint64_t)(timeout_ms > 0 ? timeout_ms : 1) * 1000);
    *out = logind;
    return 0;
}

void csdbus_logind_free(csdbus_logind *logind) {
    if (logind == NULL) return;
    sd_bus_flush_close_unref(logind->bus);
    free(logind);
}

/* A Manager method taking the session's id and answering nothing. */
static int call_with_id(csdbus_logind *logind, const char *method, const char *id) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int result = sd_bus_call_method(logind->bus, LOGIN1_NAME, LOGIN1_PATH, LOGIN1_MANAGER, method, &error, &reply,
                                    "s", id);
    if (result < 0) result = failure(result, &error);
    sd_bus_error_free(&error);
    sd_bus_message_unref(reply);
    return result < 0 ? result : 0;
}

int csdbus_logind_lock_session(csdbus_logind *logind, const char *id) {
    return call_with_id(logind, "LockSession", id);
}

int csdbus_logind_terminate_session(csdbus_logind *logind, const char *id) {
    return call_with_id(logind, "TerminateSession", id);
}

/* The session's object path, from `GetSession(id)`, as a string the caller frees. */
static int session_path(csdbus_logind *logind, const char *id, char **path) {
    *path = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int result = sd_bus_call_method(logind->bus, LOGIN1_NAME, LOGIN1_PATH, LOGIN1_MANAGER, "GetSession", &error,
                                    &reply, "s", id);
    if (result < 0) result = failure(result, &error);
    const char *read = NULL;
    if (result >= 0) result = sd_bus_message_read(reply, "o", &read);
    if (result >= 0 && read == NULL) result = -EBADMSG;
    if (result >= 0) {
        *path = strdup(read);
        if (*path == NULL) result = -ENOMEM;
    }
    sd_bus_error_free(&error);
    sd_bus_message_unref(reply);
    return result < 0 ? result : 0;
}

int csdbus_logind_locked_hint(csdbus_logind *logind, const char *id) {
    char *path = NULL;
    int result = session_path(logind, id, &path);
    if (result < 0) return result;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int hint = 0;
    result = sd_bus_get_property_trivial(logind->bus, LOGIN1_NAME, path, LOGIN1_SESSION, "LockedHint", &error, 'b',
                                         &hint);
    if (result < 0) result = failure(result, &error);
    sd_bus_error_free(&error);
    free(path);
    return result < 0 ? result : (hint != 0);
}

int csdbus_logind_leader(csdbus_logind *logind, const char *id) {
    char *path = NULL;
    int result = session_path(logind, id, &path);
    if (result < 0) return result;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    uint32_t leader = 0;
    result = sd_bus_get_property_trivial(logind->bus, LOGIN1_NAME, path, LOGIN1_SESSION, "Leader", &error, 'u',
                                         &leader);
    if (result < 0) result = failure(result, &error);
    sd_bus_error_free(&error);
    free(path);
    if (result < 0) return result;
    return leader > 0 && leader <= (uint32_t)0x7fffffff ? (int)leader : -ENXIO;
}
