// Census counters and their dump at process exit.
#include "driver/census.h"

#include <fcntl.h>
#include <time.h>
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
std::atomic<uint64_t> g_census_narrow_waits{0};

namespace {
char g_census_path[512];
int64_t g_census_start_us = 0;

// The kept events: a slot is claimed by the counter, then filled, then published by `ready`.
struct BehindSlot {
  BehindEventView e;
  std::atomic<bool> ready{false};
};
BehindSlot g_behind_log[kBehindLogSize];
std::atomic<int> g_behind_logged{0};

int64_t MonoUs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}
}  // namespace

void CensusBehindEvent(const BehindEventView& e) {
  if (!g_census_on) return;
  const int i = g_behind_logged.fetch_add(1, std::memory_order_relaxed);
  if (i >= kBehindLogSize) return;
  g_behind_log[i].e = e;
  g_behind_log[i].e.at_us = e.at_us - g_census_start_us;
  g_behind_log[i].ready.store(true, std::memory_order_release);
}

void CensusInit() {
  const char* path = std::getenv("GSHARE_CENSUS");
  if (path == nullptr || path[0] == '\0') return;
  std::snprintf(g_census_path, sizeof g_census_path, "%s", path);
  g_census_start_us = MonoUs();
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
      "#beside_denied %llu\n#narrow_waits %llu\n",
      static_cast<unsigned long long>(g_census_captured.load()),
      static_cast<unsigned long long>(g_census_narrowed.load()),
      static_cast<unsigned long long>(g_census_behind.load()),
      static_cast<unsigned long long>(g_census_behind_ms.load()),
      static_cast<unsigned long long>(g_census_behind_capped.load()),
      static_cast<unsigned long long>(g_census_beside_denied.load()),
      static_cast<unsigned long long>(g_census_narrow_waits.load()));
  if (write(fd, line, len) != len) { /* nothing more to do at exit */
  }
  for (const BehindSlot& b : g_behind_log) {
    if (!b.ready.load(std::memory_order_acquire)) continue;
    const BehindEventView& e = b.e;
    len = std::snprintf(
        line, sizeof line,
        "#behind_event %c at_us=%lld usual_gap_us=%lld period_us=%lld "
        "span_us=%lld forecast_us=%lld last_gaps_us=%lld,%lld,%lld,%lld\n",
        e.kind, static_cast<long long>(e.at_us), static_cast<long long>(e.usual_gap_us),
        static_cast<long long>(e.usual_period_us), static_cast<long long>(e.since_real_us),
        static_cast<long long>(e.forecast_us), static_cast<long long>(e.last_gaps_us[0]),
        static_cast<long long>(e.last_gaps_us[1]), static_cast<long long>(e.last_gaps_us[2]),
        static_cast<long long>(e.last_gaps_us[3]));
    if (write(fd, line, len) != len) break;
  }
  close(fd);
}

}  // namespace gshare::shim
