#ifndef PAM_FAMILYCONTROLS_H
#define PAM_FAMILYCONTROLS_H

/* pam_familycontrols.so: a PAM session module that tells the FamilyControls
 * Guard a session opened or closed (pam_sm_open_session,
 * pam_sm_close_session), and an account module that keeps a child's login
 * hours and daily time from the state file the Guard writes
 * (pam_sm_acct_mgmt); the reply reader is declared for its tests. */

#define PAM_FAMILYCONTROLS_DEFAULT_SOCKET "/run/familycontrols/guard.socket"
#define PAM_FAMILYCONTROLS_DEFAULT_LIMITS "/var/lib/familycontrols/login-limits"

#include <stddef.h>

/* What the Guard's reply (one Varlink message, its closing NUL excluded)
 * says: 0 a reply without an error, 1 an error reply (its name, as written,
 * copied into error, at most capacity bytes with the NUL), -1 not one JSON
 * object. Read as JSON, at the reply's top level: an "error" inside the
 * parameters is not an error. */
int pam_familycontrols_reply_status(const char *reply, size_t length, char *error, size_t capacity);

#endif
