#ifndef CLIBPAM_SHIM_H
#define CLIBPAM_SHIM_H
#ifdef __linux__
#include <security/pam_appl.h>
#endif
#endif
