#ifndef CSDJOURNAL_H
#define CSDJOURNAL_H

/*
 * One structured entry to the systemd journal through libsystemd's
 * sd_journal_sendv(3): a maintained library speaking journald's native
 * protocol, so each field (MESSAGE_ID=, FAMILYCONTROLS_USER=...) arrives as
 * a field of its own, which `journalctl FAMILYCONTROLS_USER=alice` matches
 * and systemd-journal-upload ships unchanged.
 *
 * No global state. Returns 0 or a negative errno, as sd-journal does.
 */

#ifdef __linux__
#include <stddef.h>

/// Sends `count` fields, each `NAME=value` (a value may hold any byte but NUL).
int csdjournal_send(const char *const *fields, size_t count);

/// Whether journald listens on this machine: its native socket exists.
int csdjournal_available(void);

#endif
#endif
