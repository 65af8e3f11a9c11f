/*
 * pam_familycontrols.so: tells the FamilyControls Guard that a session
 * opened or closed, so the Guard can run an approved app's monitor in it.
 *
 *   session optional pam_familycontrols.so [socket=PATH] [timeout=MS] [debug]
 *
 * It never blocks or fails a login: with no Guard (no socket, refused) it
 * returns at once; a Guard that does not answer within timeout (250 ms by
 * default, at most 2000) is given up on. It always returns PAM_SUCCESS from
 * open and close, or PAM_IGNORE when it could not tell the Guard.
 *
 * Each message is one Varlink call, OpenSession or CloseSession, over the
 * Guard's Unix socket. The Guard believes it only from a root peer, and
 * keeps the session while the process that opened it lives. A token (16
 * random bytes, hex) names the session between open and close; it is kept in
 * the PAM handle (pam_set_data).
 */
#define _GNU_SOURCE
#include "pam_familycontrols.h"
#include "familycontrols_guard_interface.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>

#define TOKEN_DATA "pam_familycontrols_token"
#define MESSAGE_LIMIT 16384
#define VALUE_LIMIT 1024

struct options {
    const char *socket;
    int timeout_ms;
    int debug;
};

static void parse_options(pam_handle_t *pamh, int argc, const char **argv, struct options *options) {
    options->socket = PAM_FAMILYCONTROLS_DEFAULT_SOCKET;
    options->timeout_ms = 250;
    options->debug = 0;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "socket=", 7) == 0 && argv[i][7] == '/') {
            options->socket = argv[i] + 7;
        } else if (strncmp(argv[i], "timeout=", 8) == 0) {
            char *end = NULL;
            long value = strtol(argv[i] + 8, &end, 10);
            if (end && *end == '\0' && value >= 0 && value <= 2000) options->timeout_ms = (int)value;
            else pam_syslog(pamh, LOG_WARNING, "timeout= must be 0 to 2000 milliseconds; using 250");
        } else if (strcmp(argv[i], "debug") == 0) {
            options->debug = 1;
        } else {
            pam_syslog(pamh, LOG_WARNING, "unknown option \"%.64s\" ignored", argv[i]);
        }
    }
}

/* A growing JSON text, bounded by MESSAGE_LIMIT. */
struct text {
    char bytes[MESSAGE_LIMIT];
    size_t length;
    int overflow;
};

static void append(struct text *text, const char *bytes, size_t count) {
    if (text->overflow || text->length + count >= sizeof text->bytes) {
        text->overflow = 1;
        return;
    }
    memcpy(text->bytes + text->length, bytes, count);
    text->length += count;
}

static void append_literal(struct text *text, const char *literal) { append(text, literal, strlen(literal)); }

/* A JSON string: quotes, backslashes and every control byte escaped; at most VALUE_LIMIT bytes of value. */
static void append_string(struct text *text, const char *value) {
    append_literal(text, "\"");
    size_t count = 0;
    for (const unsigned char *p = (const unsigned char *)value; *p && count < VALUE_LIMIT; p++, count++) {
        char escaped[8];
        if (*p == '"' || *p == '\\') {
            escaped[0] = '\\';
            escaped[1] = (char)*p;
            append(text, escaped, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            snprintf(escaped, sizeof escaped, "\\u%04x", *p);
            append(text, escaped, 6);
        } else {
            append(text, (const char *)p, 1);
        }
    }
    append_literal(text, "\"");
}

/* "key": (after a comma unless it is the first). */
static void append_key(struct text *text, const char *key, int first) {
    append_literal(text, first ? "\"" : ",\"");
    append_literal(text, key);
    append_literal(text, "\":");
}

/* ,"key":"value" when value is set. */
static void append_field(struct text *text, const char *key, const char *value) {
    if (!value || !*value) return;
    append_key(text, key, 0);
    append_string(text, value);
}

static long remaining_ms(const struct timespec *deadline) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
    return ms < 0 ? 0 : ms;
}

/* Sends one call and waits for its reply (a NUL-terminated message) until the deadline.
 * Returns 0 when the Guard answered without an error, else -1 with *why set
 * (and, for an error reply, its name in error). */
static int call_guard(const struct options *options, const struct text *message, const char **why,
                      char *error, size_t capacity) {
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    if (strlen(options->socket) >= sizeof address.sun_path) {
        *why = "the socket path is too long";
        return -1;
    }
    strcpy(address.sun_path, options->socket);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += options->timeout_ms / 1000;
    deadline.tv_nsec += (long)(options->timeout_ms % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000;
    }

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *why = "no socket";
        return -1;
    }
    int result = -1;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        if (errno != EINPROGRESS && errno != EAGAIN) {
            *why = errno == ENOENT ? "the Guard is not running (no socket)"
                 : errno == ECONNREFUSED ? "the Guard is not running (connection refused)"
                 : "cannot connect to the Guard";
            goto done;
        }
        /* A full backlog on a Unix socket: the Guard is busy; do not wait on it. */
        *why = "the Guard is busy";
        goto done;
    }
    size_t sent = 0;
    while (sent < message->length) {
        ssize_t written = send(fd, message->bytes + sent, message->length - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (written > 0) {
            sent += (size_t)written;
            continue;
        }
        if (written < 0 && errno == EINTR) continue;
        if (written < 0 && errno == EAGAIN) {
            struct pollfd wait = { .fd = fd, .events = POLLOUT };
            long ms = remaining_ms(&deadline);
            if (ms == 0 || poll(&wait, 1, (int)ms) <= 0) {
                *why = "the Guard did not take the message in time";
                goto done;
            }
            continue;
        }
        *why = "the Guard closed the connection";
        goto done;
    }
    char reply[4096];
    size_t have = 0;
    char *nul = NULL;
    for (;;) {
        struct pollfd wait = { .fd = fd, .events = POLLIN };
        long ms = remaining_ms(&deadline);
        int ready = ms == 0 ? 0 : poll(&wait, 1, (int)ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            *why = "the Guard did not answer in time";
            goto done;
        }
        ssize_t count = recv(fd, reply + have, sizeof reply - 1 - have, MSG_DONTWAIT);
        if (count < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (count <= 0) {
            *why = "the Guard closed the connection without an answer";
            goto done;
        }
        have += (size_t)count;
        nul = memchr(reply, '\0', have);
        if (nul) break;
        if (have >= sizeof reply - 1) {
            *why = "the Guard's answer is too long";
            goto done;
        }
    }
    switch (pam_familycontrols_reply_status(reply, (size_t)(nul - reply), error, capacity)) {
    case 0:
        result = 0;
        break;
    case 1:
        *why = "the Guard refused it";
        break;
    default:
        *why = "the Guard's answer is not a Varlink reply";
        break;
    }
done:
    close(fd);
    return result;
}

static void start_call(struct text *text, const char *method) {
    text->length = 0;
    text->overflow = 0;
    append_literal(text, "{\"method\":\"");
    append_literal(text, method);
    append_literal(text, "\",\"" FAMILYCONTROLS_REPLY_PARAMETERS "\":{");
}

static int finish_call(struct text *text) {
    append_literal(text, "}}");
    append(text, "", 1); /* the NUL that ends a Varlink message */
    return text->overflow ? -1 : 0;
}

static void free_token(pam_handle_t *pamh, void *data, int error_status) {
    (void)pamh;
    (void)error_status;
    free(data);
}

static int report(pam_handle_t *pamh, const struct options *options, const char *what, const char *user,
                  const struct text *message) {
    const char *why = NULL;
    char error[128] = "";
    if (call_guard(options, message, &why, error, sizeof error) == 0) {
        if (options->debug) pam_syslog(pamh, LOG_DEBUG, "told the Guard the session of %s %s", user, what);
        return PAM_SUCCESS;
    }
    /* Not worth more than a debug line: a machine without the Guard is normal. */
    if (options->debug) {
        pam_syslog(pamh, LOG_DEBUG, "could not tell the Guard the session of %s %s: %s%s%.100s", user, what, why,
                   error[0] ? " with " : "", error);
    }
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    struct options options;
    parse_options(pamh, argc, argv, &options);
    const char *user = NULL;
    if (pam_get_item(pamh, PAM_USER, (const void **)&user) != PAM_SUCCESS || !user || !*user) return PAM_IGNORE;

    unsigned char random_bytes[16];
    if (getrandom(random_bytes, sizeof random_bytes, GRND_NONBLOCK) != (ssize_t)sizeof random_bytes) return PAM_IGNORE;
    char *token = malloc(sizeof random_bytes * 2 + 1);
    if (!token) return PAM_IGNORE;
    for (size_t i = 0; i < sizeof random_bytes; i++) snprintf(token + 2 * i, 3, "%02x", random_bytes[i]);
    if (pam_set_data(pamh, TOKEN_DATA, token, free_token) != PAM_SUCCESS) {
        free(token);
        return PAM_IGNORE;
    }

    const char *service = NULL, *tty = NULL;
    pam_get_item(pamh, PAM_SERVICE, (const void **)&service);
    pam_get_item(pamh, PAM_TTY, (const void **)&tty);
    struct text *message = calloc(1, sizeof *message);
    if (!message) return PAM_IGNORE;
    start_call(message, FAMILYCONTROLS_OPEN_SESSION);
    append_key(message, FAMILYCONTROLS_OPEN_SESSION_TOKEN, 1);
    append_string(message, token);
    append_key(message, FAMILYCONTROLS_OPEN_SESSION_USER, 0);
    append_string(message, user);
    append_key(message, FAMILYCONTROLS_OPEN_SESSION_SERVICE, 0);
    append_string(message, service ? service : "");
    append_field(message, FAMILYCONTROLS_OPEN_SESSION_TTY, tty);
    append_field(message, FAMILYCONTROLS_OPEN_SESSION_RUNTIME_DIRECTORY, pam_getenv(pamh, "XDG_RUNTIME_DIR"));
    append_field(message, FAMILYCONTROLS_OPEN_SESSION_DISPLAY, pam_getenv(pamh, "DISPLAY"));
    append_field(message, FAMILYCONTROLS_OPEN_SESSION_WAYLAND_DISPLAY, pam_getenv(pamh, "WAYLAND_DISPLAY"));
    append_field(message, FAMILYCONTROLS_OPEN_SESSION_BUS, pam_getenv(pamh, "DBUS_SESSION_BUS_ADDRESS"));
    append_field(message, FAMILYCONTROLS_OPEN_SESSION_SESSION_ID, pam_getenv(pamh, "XDG_SESSION_ID"));
    int status = finish_call(message) == 0 ? report(pamh, &options, "opened", user, message) : PAM_IGNORE;
    free(message);
    return status;
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    struct options options;
    parse_options(pamh, argc, argv, &options);
    const char *token = NULL;
    if (pam_get_data(pamh, TOKEN_DATA, (const void **)&token) != PAM_SUCCESS || !token) return PAM_IGNORE;
    const char *user = NULL;
    pam_get_item(pamh, PAM_USER, (const void **)&user);
    struct text *message = calloc(1, sizeof *message);
    if (!message) return PAM_IGNORE;
    start_call(message, FAMILYCONTROLS_CLOSE_SESSION);
    append_key(message, FAMILYCONTROLS_CLOSE_SESSION_TOKEN, 1);
    append_string(message, token);
    int status = finish_call(message) == 0 ? report(pamh, &options, "closed", user ? user : "?", message) : PAM_IGNORE;
    free(message);
    return status;
}
