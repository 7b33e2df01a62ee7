// Placeholder: the status type lives in status.h.
#include "base/status.h"
