#include "op_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace gs_cuda::fake {
namespace {

std::atomic<int> g_log_fd{-1};

}  // namespace

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void SleepUntilNs(uint64_t deadline_ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(deadline_ns / 1000000000ull);
  ts.tv_nsec = static_cast<long>(deadline_ns % 1000000000ull);
  // clock_nanosleep returns the error number itself; EINTR means a signal cut the sleep short.
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

bool OpenOpLog() {
  const char* path = std::getenv("FAKE_CUDA_LOG");
  if (path == nullptr || path[0] == '\0') return true;
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  g_log_fd.store(fd);
  return true;
}

void LogOp(char kind, uint64_t start_ns, uint64_t end_ns, const char* name, int device,
           unsigned sms) {
  int fd = g_log_fd.load();
  if (fd < 0) return;
  char partition[24] = "";
  if (sms > 0) std::snprintf(partition, sizeof partition, "@sm%u", sms);
  char line[192];
  int n = std::snprintf(line, sizeof line, "%c %d %llu %llu %s%s %d\n", kind,
                        static_cast<int>(getpid()), static_cast<unsigned long long>(start_ns),
                        static_cast<unsigned long long>(end_ns), name, partition, device);
  if (n <= 0 || n >= static_cast<int>(sizeof line)) return;
  // One write(2) per line: O_APPEND makes each line land whole even with many writers. errno is
  // kept so that logging from a worker never shows through in the job.
  int saved = errno;
  ssize_t ignored = write(fd, line, static_cast<size_t>(n));
  (void)ignored;
  errno = saved;
}

}  // namespace gs_cuda::fake
