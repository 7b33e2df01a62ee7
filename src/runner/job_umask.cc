#include "runner/job_umask.h"
#include "gshare/job_env.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

namespace gshare {
namespace {

constexpr const char* kJobUmaskEnv = job_env::kJobUmask;

}  // namespace

void SetPrivateUmask() {
  const mode_t before = umask(077);
  char octal[8];
  std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(before & 0777));
  setenv(kJobUmaskEnv, octal, 1);
}

void RestoreJobUmask() {
  const char* saved = std::getenv(kJobUmaskEnv);
  if (saved != nullptr) {
    char* end = nullptr;
    const unsigned long mask = std::strtoul(saved, &end, 8);
    if (end != saved && *end == '\0' && mask <= 0777) umask(static_cast<mode_t>(mask));
  }
  unsetenv(kJobUmaskEnv);
}

}  // namespace gshare
