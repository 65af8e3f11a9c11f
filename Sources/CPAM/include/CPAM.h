#ifndef CPAM_H
#define CPAM_H
#ifdef __linux__
#include <security/pam_appl.h>
#endif
#endif
