// Census counters and their dump at process exit.
#include "driver/census.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace gshare::shim {

bool g_census_on = false;
std::atomic<uint64_t> g_census[kNumHooks];
std::atomic<uint64_t> g_census_captured{0};
std::atomic<uint64_t> g_census_narrowed{0};
std::atomic<uint64_t> g_census_behind{0};
std::atomic<uint64_t> g_census_behind_ms{0};
std::atomic<uint64_t> g_census_behind_capped{0};
std::atomic<uint64_t> g_census_beside_denied{0};

namespace {
char g_census_path[512];
}

void CensusInit() {
  const char* path = std::getenv("GSHARE_CENSUS");
  if (path == nullptr || path[0] == '\0') return;
  std::snprintf(g_census_path, sizeof g_census_path, "%s", path);
  g_census_on = true;
}

// Runs at exit (or dlclose); uses only stack buffers and write(2).
__attribute__((destructor)) static void CensusDump() {
  if (!g_census_on) return;
  char path[600];
  std::snprintf(path, sizeof path, "%s.%d", g_census_path, static_cast<int>(getpid()));
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[320];
  for (int i = 0; i < kNumHooks; ++i) {
    uint64_t n = g_census[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    int len = std::snprintf(line, sizeof line, "%s %llu\n", HookName(i),
                            static_cast<unsigned long long>(n));
    if (write(fd, line, len) != len) break;
  }
  int len = std::snprintf(
      line, sizeof line,
      "#captured %llu\n#narrowed %llu\n#behind %llu\n#behind_ms %llu\n#behind_capped %llu\n"
      "#beside_denied %llu\n",
      static_cast<unsigned long long>(g_census_captured.load()),
      static_cast<unsigned long long>(g_census_narrowed.load()),
      static_cast<unsigned long long>(g_census_behind.load()),
      static_cast<unsigned long long>(g_census_behind_ms.load()),
      static_cast<unsigned long long>(g_census_behind_capped.load()),
      static_cast<unsigned long long>(g_census_beside_denied.load()));
  if (write(fd, line, len) != len) { /* nothing more to do at exit */
  }
  close(fd);
}

}  // namespace gshare::shim
