#include "device_usage.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "driver.h"

namespace gs_cuda::fake {
namespace {

using Counter = std::atomic_ref<uint64_t>;
static_assert(Counter::is_always_lock_free, "the device file needs lock-free 8-byte atomics");
static_assert(Counter::required_alignment <= 8);
static_assert(kDeviceFileBytes == kMaxDevices * sizeof(uint64_t));

// The counters in use: g_local until OpenDeviceUsage maps a file. Set once in cuInit, before
// cuInit publishes readiness, and never changed again (the mapping is never unmapped).
alignas(8) uint64_t g_local[kMaxDevices];
uint64_t* g_counters = g_local;

// What this process holds on each device, so that exit() can give it back. Only with a file.
alignas(8) uint64_t g_mine[kMaxDevices];
pid_t g_owner = 0;  // the process that mapped the file; a fork child gives back nothing

// exit() with stream workers still running ops: a worker's UnchargeDevice either takes its
// bytes out of g_mine before the exchange below (and out of the file itself), or finds g_mine
// already emptied and leaves the file alone. Either way no byte is given back twice.
void GiveBackAtExit() {
  if (getpid() != g_owner) return;
  for (int d = 0; d < kMaxDevices; ++d) {
    uint64_t held = Counter(g_mine[d]).exchange(0);
    if (held != 0) Counter(g_counters[d]).fetch_sub(held);
  }
}

}  // namespace

bool OpenDeviceUsage(const char* path) {
  if (path == nullptr || path[0] == '\0') return true;
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  struct stat st;
  // Growing to the same size from two processes at once is harmless: ftruncate never zeroes
  // bytes that are already in the file.
  bool ok = fstat(fd, &st) == 0 && (st.st_size >= static_cast<off_t>(kDeviceFileBytes) ||
                                    ftruncate(fd, static_cast<off_t>(kDeviceFileBytes)) == 0);
  void* p =
      ok ? mmap(nullptr, kDeviceFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  close(fd);
  if (p == MAP_FAILED) return false;
  g_counters = static_cast<uint64_t*>(p);
  g_owner = getpid();
  std::atexit(GiveBackAtExit);
  return true;
}

CUresult ChargeDevice(int device, uint64_t bytes, uint64_t capacity) {
  if (bytes > capacity) return CUDA_ERROR_OUT_OF_MEMORY;
  Counter used(g_counters[device]);
  uint64_t now = used.load();
  do {
    if (now > capacity - bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  } while (!used.compare_exchange_weak(now, now + bytes));
  if (g_counters != g_local) Counter(g_mine[device]).fetch_add(bytes);
  return CUDA_SUCCESS;
}

void UnchargeDevice(int device, uint64_t bytes) {
  if (g_counters != g_local) {
    Counter mine(g_mine[device]);
    uint64_t held = mine.load();
    do {
      if (held < bytes) return;  // given back by exit() already
    } while (!mine.compare_exchange_weak(held, held - bytes));
  }
  Counter(g_counters[device]).fetch_sub(bytes);
}

void TakeAllDeviceBytes(uint64_t* held) {
  for (int d = 0; d < kMaxDevices; ++d) {
    held[d] = Counter(g_counters != g_local ? g_mine[d] : g_local[d]).load();
    if (held[d] != 0) UnchargeDevice(d, held[d]);
  }
}

CUresult RechargeAllDeviceBytes(const uint64_t* held, uint64_t capacity) {
  for (int d = 0; d < kMaxDevices; ++d) {
    if (held[d] == 0 || ChargeDevice(d, held[d], capacity) == CUDA_SUCCESS) continue;
    for (int u = 0; u < d; ++u) {
      if (held[u] != 0) UnchargeDevice(u, held[u]);
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  return CUDA_SUCCESS;
}

uint64_t DeviceUsedBytes(int device) { return Counter(g_counters[device]).load(); }

}  // namespace gs_cuda::fake
