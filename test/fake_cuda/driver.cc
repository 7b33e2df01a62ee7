#include "driver.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "device_usage.h"
#include "op_log.h"

namespace gs_cuda::fake {

InjectedFailures::InjectedFailures(const char* env) {
  const char* v = std::getenv(env);
  limit_ = v == nullptr ? 0L : std::strtol(v, nullptr, 10);
}

namespace {

// One entry of CUDA_VISIBLE_DEVICES, text[0, len): its physical index, or -1.
int ParseVisibleEntry(const char* text, size_t len, int physical_count) {
  if (len == 0) return -1;
  if (text[0] < '0' || text[0] > '9') return PhysicalGpuOfUuidText(text, len, physical_count);
  uint64_t n = 0;
  for (size_t i = 0; i < len; ++i) {
    if (text[i] < '0' || text[i] > '9' || n > kMaxDevices) return -1;
    n = n * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  return n < static_cast<uint64_t>(physical_count) ? static_cast<int>(n) : -1;
}

struct DriverState {
  std::mutex mu;  // guards everything below
  bool init_done = false;
  CUresult init_result = CUDA_SUCCESS;
  Settings settings;
  Context* primary[kMaxDevices] = {};
  std::unordered_map<const void*, HandleKind> handles;
};

// Leaked: never destroyed, so exit() never races a worker on it.
DriverState& State() {
  static DriverState* s = new DriverState;
  return *s;
}

// Set once Init succeeded; read without the lock on every call.
std::atomic<bool> g_ready{false};

// Ordinal -> physical index; written by Init and by a restore with GPU pairs.
std::atomic<int> g_physical[kMaxDevices];

std::atomic<CUresult> g_sticky{CUDA_SUCCESS};

}  // namespace

CUresult Init() {
  DriverState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  if (st.init_done) return st.init_result;
  st.init_done = true;
  st.settings.physical_devices = PhysicalGpuCount();
  int visible[kMaxDevices];
  st.settings.devices = ParseVisibleDevices(std::getenv("CUDA_VISIBLE_DEVICES"),
                                            st.settings.physical_devices, visible);
  for (int i = 0; i < st.settings.devices; ++i) g_physical[i].store(visible[i]);
  st.settings.mem_bytes = EnvNumber("FAKE_CUDA_MEM_BYTES", 16ull << 30);
  st.settings.kernel_ms = static_cast<uint32_t>(EnvNumber("FAKE_CUDA_KERNEL_MS", 20));
  st.settings.sms = static_cast<unsigned>(EnvNumber("FAKE_CUDA_SMS", 132));
  st.settings.context_bytes = EnvNumber("FAKE_CUDA_CONTEXT_BYTES", 0);
  st.settings.pin_us_per_mib = EnvNumber("FAKE_CUDA_PIN_US_PER_MIB", 0);
  if (!OpenOpLog() || !OpenDeviceUsage(std::getenv("FAKE_CUDA_DEVICE_FILE")) ||
      !StartCheckpointAgent()) {
    st.init_result = CUDA_ERROR_UNKNOWN;
  } else if (st.settings.devices == 0) {
    st.init_result = CUDA_ERROR_NO_DEVICE;
  } else {
    g_ready.store(true);
  }
  return st.init_result;
}

const Settings& GetSettings() { return State().settings; }

int ParseVisibleDevices(const char* visible, int physical_count, int* out) {
  int n = 0;
  if (visible == nullptr) {
    for (; n < physical_count; ++n) out[n] = n;
    return n;
  }
  bool seen[kMaxDevices] = {};
  const char* p = visible;
  while (*p != '\0' && n < kMaxDevices) {
    const char* comma = std::strchr(p, ',');
    size_t len = comma != nullptr ? static_cast<size_t>(comma - p) : std::strlen(p);
    int physical = ParseVisibleEntry(p, len, physical_count);
    if (physical < 0 || seen[physical]) break;
    seen[physical] = true;
    out[n++] = physical;
    if (comma == nullptr) break;
    p = comma + 1;
  }
  return n;
}

int PhysicalDevice(int ordinal) { return g_physical[ordinal].load(); }

void SetPhysicalDevice(int ordinal, int physical) { g_physical[ordinal].store(physical); }

CUresult CheckInit() {
  if (!g_ready.load()) return CUDA_ERROR_NOT_INITIALIZED;
  WaitWhileLocked();
  return CUDA_SUCCESS;
}

CUresult CheckContext(Context** ctx) {
  if (CUresult r = CheckInit()) return r;
  *ctx = CurrentContext();
  return *ctx != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CheckDevice(CUdevice dev) {
  if (CUresult r = CheckInit()) return r;
  return (dev >= 0 && dev < GetSettings().devices) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

Context* PrimaryContext(int dev) {
  DriverState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  if (st.primary[dev] == nullptr) {
    st.primary[dev] = Context::Create(dev, /*primary=*/true);
    if (st.primary[dev] != nullptr) st.handles[st.primary[dev]] = HandleKind::kContext;
  }
  return st.primary[dev];
}

CUresult ResolveStream(CUstream handle, bool per_thread_export, Stream** out) {
  if (CUresult r = CheckInit()) return r;
  uintptr_t v = reinterpret_cast<uintptr_t>(handle);
  if (v == 0) v = per_thread_export ? 0x2 : 0x1;
  if (v == 0x1 || v == 0x2) {
    Context* ctx = CurrentContext();
    if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    *out = v == 0x1 ? ctx->legacy_stream() : ctx->PerThreadStream();
    return *out != nullptr ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (!IsHandle(handle, HandleKind::kStream)) return CUDA_ERROR_INVALID_HANDLE;
  *out = reinterpret_cast<Stream*>(handle);
  return CUDA_SUCCESS;
}

void SetStickyError(CUresult r) {
  CUresult none = CUDA_SUCCESS;
  g_sticky.compare_exchange_strong(none, r);  // the first error stays
}

CUresult StickyError() { return g_sticky.load(); }

void AddHandle(const void* h, HandleKind kind) {
  DriverState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  st.handles[h] = kind;
}

void DropHandle(const void* h) {
  DriverState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  st.handles.erase(h);
}

bool IsHandle(const void* h, HandleKind kind) {
  if (h == nullptr) return false;
  DriverState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.handles.find(h);
  return it != st.handles.end() && it->second == kind;
}

}  // namespace gs_cuda::fake
