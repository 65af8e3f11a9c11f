#ifndef PAM_FAMILYCONTROLS_H
#define PAM_FAMILYCONTROLS_H

/* pam_familycontrols.so: a PAM session module that tells the FamilyControls
 * Guard a session opened or closed. It has no interface of its own: libpam
 * calls pam_sm_open_session and pam_sm_close_session. */

#define PAM_FAMILYCONTROLS_DEFAULT_SOCKET "/run/familycontrols/guard.socket"

#endif
