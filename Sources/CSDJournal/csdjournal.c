#include "CSDJournal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

int csdjournal_send(const char *const *fields, size_t count) {
    if (count == 0 || count > 64) return -EINVAL;
    struct iovec vectors[64];
    for (size_t index = 0; index < count; index++) {
        vectors[index].iov_base = (void *)fields[index];
        vectors[index].iov_len = strlen(fields[index]);
    }
    return sd_journal_sendv(vectors, (int)count);
}

int csdjournal_available(void) {
    return access("/run/systemd/journal/socket", W_OK) == 0;
}
