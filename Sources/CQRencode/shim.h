#ifndef CQRENCODE_SHIM_H
#define CQRENCODE_SHIM_H
/* libqrencode: the QR code familyctl code enroll draws in the terminal. */
#ifdef __linux__
#include <qrencode.h>
#endif
#endif
