#include "CSDBus.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-bus.h>

#define NOTIFICATIONS_NAME "org.freedesktop.Notifications"
#define NOTIFICATIONS_PATH "/org/freedesktop/Notifications"
#define EVENTS_MAX 64
/* The bus name of the server, at most 255 bytes by the D-Bus specification. */
#define OWNER_MAX 256

struct csdbus_notifier {
    sd_bus *bus;
    char owner[OWNER_MAX];
    csdbus_event events[EVENTS_MAX];
    unsigned first;
    unsigned count;
};

static void push(csdbus_notifier *notifier, const csdbus_event *event) {
    /* A flood beyond the ring drops the newest: the server, not us, would be at fault. */
    if (notifier->count == EVENTS_MAX) return;
    notifier->events[(notifier->first + notifier->count) % EVENTS_MAX] = *event;
    notifier->count += 1;
}

/* Only the name's owner speaks for the server: any other client on the bus
 * may send a signal with the same interface and member. */
static int from_owner(csdbus_notifier *notifier, sd_bus_message *message) {
    const char *sender = sd_bus_message_get_sender(message);
    return sender != NULL && strcmp(sender, notifier->owner) == 0;
}

static int on_action(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)error;
    csdbus_notifier *notifier = userdata;
    if (!from_owner(notifier, message)) return 0;
    uint32_t id = 0;
    const char *action = NULL;
    if (sd_bus_message_read(message, "us", &id, &action) < 0 || action == NULL) return 0;
    if (strlen(action) >= CSDBUS_ACTION_MAX) return 0;
    csdbus_event event = { .kind = CSDBUS_EVENT_ACTION, .id = id, .reason = 0 };
    strcpy(event.action, action);
    push(notifier, &event);
    return 0;
}

static int on_closed(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)error;
    csdbus_notifier *notifier = userdata;
    if (!from_owner(notifier, message)) return 0;
    uint32_t id = 0, reason = 0;
    if (sd_bus_message_read(message, "uu", &id, &reason) < 0) return 0;
    csdbus_event event = { .kind = CSDBUS_EVENT_CLOSED, .id = id, .reason = reason };
    push(notifier, &event);
    return 0;
}

int csdbus_notifier_open(csdbus_notifier **out, int timeout_ms) {
    *out = NULL;
    csdbus_notifier *notifier = calloc(1, sizeof *notifier);
    if (notifier == NULL) return -ENOMEM;
    int result = sd_bus_open_user(&notifier->bus);
    if (result < 0) {
        free(notifier);
        return -ENOMEDIUM;
    }
    uint64_t timeout = (uint64_t)timeout_ms * 1000;
    sd_bus_set_method_call_timeout(notifier->bus, timeout);
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    /* Starts an activatable server; fails harmlessly when there is none. */
    (void)sd_bus_call_method(notifier->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                             "StartServiceByName", &error, &reply, "su", NOTIFICATIONS_NAME, 0);
    sd_bus_error_free(&error);
    reply = sd_bus_message_unref(reply);
    /* The matches first, then the owner: a signal sent in between is not lost. */
    result = sd_bus_match_signal(notifier->bus, NULL, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME,
                                 "ActionInvoked", on_action, notifier);
    if (result >= 0) {
        result = sd_bus_match_signal(notifier->bus, NULL, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME,
                                     "NotificationClosed", on_closed, notifier);
    }
    if (result >= 0) {
        result = sd_bus_call_method(notifier->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                    "org.freedesktop.DBus", "GetNameOwner", &error, &reply, "s", NOTIFICATIONS_NAME);
        if (result < 0 && sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.NameHasNoOwner")) result = -ESRCH;
    }
    const char *owner = NULL;
    if (result >= 0) result = sd_bus_message_read(reply, "s", &owner);
    if (result >= 0 && (owner == NULL || strlen(owner) >= OWNER_MAX)) result = -EBADMSG;
    if (result >= 0) strcpy(notifier->owner, owner);
    sd_bus_message_unref(reply);
    sd_bus_error_free(&error);
    if (result < 0) {
        csdbus_notifier_free(notifier);
        return result;
    }
    *out = notifier;
    return 0;
}

void csdbus_notifier_free(csdbus_notifier *notifier) {
    if (notifier == NULL) return;
    sd_bus_flush_close_unref(notifier->bus);
    free(notifier);
}

const char *csdbus_notifier_owner(const csdbus_notifier *notifier) {
    return notifier->owner;
}

int csdbus_notify(csdbus_notifier *notifier, uint32_t replaces_id, const char *summary, const char *body,
                  int with_actions, int persistent, uint32_t *id) {
    sd_bus_message *call = NULL, *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int result = sd_bus_message_new_method_call(notifier->bus, &call, notifier->owner, NOTIFICATIONS_PATH,
                                                NOTIFICATIONS_NAME, "Notify");
    if (result >= 0) result = sd_bus_message_append(call, "susss", "FamilyControls", replaces_id, "", summary, body);
    if (result >= 0) {
        result = with_actions ? sd_bus_message_append(call, "as", 4, "approve", "Approve", "deny", "Deny")
                              : sd_bus_message_append(call, "as", 0);
    }
    /* Hints: normal urgency, and kept until withdrawn when persistent. */
    if (result >= 0) {
        result = persistent ? sd_bus_message_append(call, "a{sv}", 2, "urgency", "y", 1, "resident", "b", 1)
                            : sd_bus_message_append(call, "a{sv}", 1, "urgency", "y", 1);
    }
    if (result >= 0) result = sd_bus_message_append(call, "i", persistent ? 0 : -1);
    if (result >= 0) result = sd_bus_call(notifier->bus, call, 0, &error, &reply);
    if (result >= 0) result = sd_bus_message_read(reply, "u", id);
    sd_bus_error_free(&error);
    sd_bus_message_unref(reply);
    sd_bus_message_unref(call);
    return result < 0 ? result : 0;
}

int csdbus_close_notification(csdbus_notifier *notifier, uint32_t id) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int result = sd_bus_call_method(notifier->bus, notifier->owner, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME,
                                    "CloseNotification", &error, &reply, "u", id);
    sd_bus_error_free(&error);
    sd_bus_message_unref(reply);
    return result < 0 ? result : 0;
}

int csdbus_notifier_wait(csdbus_notifier *notifier, int extra_fd, int timeout_ms) {
    int result;
    /* What is queued already is processed before waiting. */
    while ((result = sd_bus_process(notifier->bus, NULL)) > 0) {}
    if (result < 0) return result;
    struct pollfd entries[2] = {
        { .fd = sd_bus_get_fd(notifier->bus), .events = 0 },
        { .fd = extra_fd, .events = POLLIN },
    };
    if (entries[0].fd < 0) return entries[0].fd;
    int events = sd_bus_get_events(notifier->bus);
    if (events < 0) return events;
    entries[0].events = (short)events;
    /* sd-bus's own deadline (a method call's timeout), CLOCK_MONOTONIC in microseconds. */
    uint64_t until = 0;
    int timeout = timeout_ms;
    if (sd_bus_get_timeout(notifier->bus, &until) > 0 && until != UINT64_MAX) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t current = (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
        int left = until <= current ? 0 : (int)((until - current + 999) / 1000);
        if (timeout < 0 || left < timeout) timeout = left;
    }
    if (poll(entries, extra_fd >= 0 ? 2 : 1, timeout) < 0 && errno != EINTR) return -errno;
    while ((result = sd_bus_process(notifier->bus, NULL)) > 0) {}
    return result < 0 ? result : 0;
}

int csdbus_next_event(csdbus_notifier *notifier, csdbus_event *event) {
    if (notifier->count == 0) return 0;
    *event = notifier->events[notifier->first];
    notifier->first = (notifier->first + 1) % EVENTS_MAX;
    notifier->count -= 1;
    return 1;
}
