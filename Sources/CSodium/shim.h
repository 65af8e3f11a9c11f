#ifndef CSODIUM_SHIM_H
#define CSODIUM_SHIM_H
#ifdef __linux__
#include <sodium.h>
#endif
#endif
