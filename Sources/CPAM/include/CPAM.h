#ifndef CPAM_H
#define CPAM_H

#ifdef __linux__
#include <stddef.h>
#include <security/pam_appl.h>

/// Answers one PAM message. Called on the thread running the PAM transaction.
///
/// For prompts, write the answer (without a NUL) into `reply` and set `*length`;
/// a length of `capacity` or more means the answer did not fit and the
/// conversation fails. For info and error messages, `reply` is NULL.
/// Return 0 to go on, non-zero to cancel the whole conversation.
typedef int (*cpam_reply_fn)(void *context, int style, const char *message,
                             char *reply, size_t capacity, size_t *length);

/// The conversation state handed to libpam as `appdata_ptr`.
typedef struct cpam_conversation {
    cpam_reply_fn reply;
    void *context;
} cpam_conversation;

/// The largest reply the trampoline accepts, NUL included (`PAM_MAX_RESP_SIZE`).
#define CPAM_MAX_REPLY_SIZE PAM_MAX_RESP_SIZE
/// The most messages one conversation call may carry (`PAM_MAX_NUM_MSG`).
#define CPAM_MAX_MESSAGES PAM_MAX_NUM_MSG

/// The `pam_conv` trampoline: checks bounds, asks `reply` for each message,
/// and returns `malloc`ed replies (PAM frees them). On any failure every reply
/// already made is zeroed and freed and `PAM_CONV_ERR` is returned.
int cpam_converse(int num_msg, const struct pam_message **msg,
                  struct pam_response **resp, void *appdata_ptr);

// libpam is loaded (dlopen) at the first transaction, not when the program
// starts: a program that never authenticates (familyctl status, the Guard
// between requests) never maps it, nor the libaudit and libcap-ng it brings.
// Every libpam call goes through the calls below.

/// Loads libpam if it is not loaded yet. NULL once it is; otherwise why not
/// (the loader's message), the same on every call.
const char *cpam_unavailable(void);

/// `pam_start_confdir` (or `pam_start` when `confdir` is NULL) wired to
/// `cpam_converse`. `conversation` must outlive the handle.
/// `PAM_SYSTEM_ERR` when libpam is unavailable (`cpam_unavailable` says why).
int cpam_start(const char *service, const char *user, const char *confdir,
               cpam_conversation *conversation, pam_handle_t **handle);

/// `pam_authenticate`, `pam_acct_mgmt` and `pam_end`, on a handle
/// `cpam_start` made.
int cpam_authenticate(pam_handle_t *handle, int flags);
int cpam_acct_mgmt(pam_handle_t *handle, int flags);
int cpam_end(pam_handle_t *handle, int status);

/// libpam's text for `code` (`pam_strerror`); NULL when libpam is not loaded
/// in this process. It never loads it: the Guard describes its helper's
/// failures without running libpam's code in its own process.
const char *cpam_strerror(int code);

/// Starts reading back what this process writes to syslog (what PAM modules
/// log through `pam_syslog`): `openlog` with `LOG_PERROR` and descriptor 2 a
/// pipe, whose read end it returns (-1 on failure or with descriptor 2 closed,
/// nothing changed). Only for
/// a process of its own (the PAM helper): descriptor 2 is the pipe's until
/// `cpam_module_log_end`. The lines still reach syslog as before.
int cpam_module_log_begin(int *saved_stderr);

/// Puts descriptor 2 back and syslog's options as `csystem_open_log` sets
/// them (`LOG_PID`, `LOG_USER`), copies up to `capacity`
/// bytes of what was written into `buffer` (a full pipe drops the rest) and
/// closes `reader`. Returns the length copied.
size_t cpam_module_log_end(int reader, int saved_stderr, char *buffer, size_t capacity);

/// Sets a string item (`pam_set_item`).
int cpam_set_string_item(pam_handle_t *handle, int item, const char *value);

/// Reads a string item (`pam_get_item`); NULL when unset.
const char *cpam_get_string_item(pam_handle_t *handle, int item);

/// Zeroes `length` bytes at `pointer` in a way the compiler cannot drop (`explicit_bzero`).
void cpam_zero(void *pointer, size_t length);

/// What the shadow entry says of a user's password (`getspnam_r`, needs root),
/// so a failure can be explained to the administrator. The hash never leaves C.
typedef enum cpam_password_state {
    CPAM_PASSWORD_UNKNOWN = 0,  /* no readable shadow entry */
    CPAM_PASSWORD_USABLE = 1,   /* a hash that can be checked */
    CPAM_PASSWORD_LOCKED = 2,   /* "!" before a hash: usermod -L, passwd -l */
    CPAM_PASSWORD_NONE = 3,     /* empty, "!", "!!", "*", "!*": never set */
    CPAM_ACCOUNT_EXPIRED = 4    /* sp_expire has passed: chage -E */
} cpam_password_state;

cpam_password_state cpam_shadow_password_state(const char *user);

#endif /* __linux__ */
#endif /* CPAM_H */
