#include "CPAM.h"
