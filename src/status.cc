// Placeholder: the status type lives in status.h.
#include "status.h"
